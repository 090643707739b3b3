/* Raw zbar on every frame of a YUV4MPEG2 clip: the baseline ScanTrack's replay is measured
 * against. Same work as the agent's decoder (luma only, one scanner, same symbologies and
 * density), nothing else: no splitting, tracking or events.
 *
 *   zbar_raw CLIP.y4m [--density N] [--symbologies all|conveyor] [--values 1]
 *
 * Prints one line: frames, symbols, seconds, frames/s (with --values 1, first each symbol's frame
 * and value, a line each). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zbar.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: zbar_raw CLIP.y4m [--density N] [--symbologies all|conveyor]\n"); return 2; }
    int density = 1;
    int conveyor = 0;
    int values = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--density")) density = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--symbologies")) conveyor = !strcmp(argv[i + 1], "conveyor");
        else if (!strcmp(argv[i], "--values")) values = atoi(argv[i + 1]);
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    char header[4096];
    if (!fgets(header, sizeof header, f)) { fprintf(stderr, "%s: no header\n", argv[1]); return 2; }
    int w = 0, h = 0;
    char chroma[32] = "420jpeg";
    for (char *tok = strtok(header, " \n"); tok; tok = strtok(NULL, " \n")) {
        if (tok[0] == 'W') w = atoi(tok + 1);
        else if (tok[0] == 'H') h = atoi(tok + 1);
        else if (tok[0] == 'C') snprintf(chroma, sizeof chroma, "%s", tok + 1);
    }
    size_t luma = (size_t)w * h, cw = (w + 1) / 2, ch = (h + 1) / 2, extra = 0;
    if (!strncmp(chroma, "mono", 4)) extra = 0;
    else if (!strncmp(chroma, "420", 3)) extra = 2 * cw * ch;
    else if (!strcmp(chroma, "422")) extra = 2 * cw * h;
    else if (!strcmp(chroma, "444")) extra = 2 * luma;
    unsigned char *frame = malloc(luma + extra);

    zbar_image_scanner_t *scanner = zbar_image_scanner_create();
    if (conveyor) {
        zbar_image_scanner_set_config(scanner, 0, ZBAR_CFG_ENABLE, 0);
        zbar_symbol_type_t types[] = {ZBAR_EAN13, ZBAR_EAN8, ZBAR_UPCA, ZBAR_UPCE, ZBAR_CODE128, ZBAR_CODE39, ZBAR_I25, ZBAR_QRCODE};
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) zbar_image_scanner_set_config(scanner, types[i], ZBAR_CFG_ENABLE, 1);
    }
    zbar_image_scanner_set_config(scanner, 0, ZBAR_CFG_X_DENSITY, density);
    zbar_image_scanner_set_config(scanner, 0, ZBAR_CFG_Y_DENSITY, density);

    long frames = 0, symbols = 0;
    char line[1024];
    double start = now();
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "FRAME", 5)) { fprintf(stderr, "%s: damaged at frame %ld\n", argv[1], frames); break; }
        if (fread(frame, 1, luma + extra, f) != luma + extra) { fprintf(stderr, "%s: truncated at frame %ld\n", argv[1], frames); break; }
        zbar_image_t *image = zbar_image_create();
        zbar_image_set_format(image, zbar_fourcc('Y', '8', '0', '0'));
        zbar_image_set_size(image, w, h);
        zbar_image_set_data(image, frame, luma, NULL);
        int n = zbar_scan_image(scanner, image);
        if (n > 0) symbols += n;
        if (values)
            for (const zbar_symbol_t *s = zbar_image_first_symbol(image); s; s = zbar_symbol_next(s))
                printf("%ld %s\n", frames, zbar_symbol_get_data(s));
        zbar_image_destroy(image);
        frames++;
    }
    double seconds = now() - start;
    printf("frames=%ld symbols=%ld seconds=%.3f fps=%.2f\n", frames, symbols, seconds, frames / seconds);
    return 0;
}
