/* Raw zbar on every frame of a YUV4MPEG2 clip: the baseline ScanTrack's replay is measured
 * against. Same work as the agent's decoder (luma only, one scanner, same symbologies and
 * density), nothing else: no splitting, tracking or events.
 *
 *   zbar_raw CLIP.y4m [--density N] [--symbologies all|conveyor] [--values 1] [--regions FILE]
 *
 * Prints one line: frames, symbols, seconds, frames/s (with --values 1, first each symbol's frame
 * and value, a line each). --regions FILE: only these crops of each frame, a line a region
 * "FRAME X0 Y0 X1 Y1 ROWSTEP COLUMNSTEP" (inclusive corners; a step of 0 scans no lines that way),
 * each by a fresh scanner as the agent's guided decoder does; the time is decoding only. */
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

/* A scanner with zbar's symbologies, or the agent's conveyor set; rows every `rows` lines, columns
 * every `columns` (0: none). */
static zbar_image_scanner_t *scanner_for(int conveyor, int rows, int columns) {
    zbar_image_scanner_t *scanner = zbar_image_scanner_create();
    if (conveyor) {
        zbar_image_scanner_set_config(scanner, 0, ZBAR_CFG_ENABLE, 0);
        zbar_symbol_type_t types[] = {ZBAR_EAN13, ZBAR_EAN8, ZBAR_UPCA, ZBAR_UPCE, ZBAR_CODE128, ZBAR_CODE39, ZBAR_I25, ZBAR_QRCODE};
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) zbar_image_scanner_set_config(scanner, types[i], ZBAR_CFG_ENABLE, 1);
    }
    zbar_image_scanner_set_config(scanner, 0, ZBAR_CFG_X_DENSITY, columns);
    zbar_image_scanner_set_config(scanner, 0, ZBAR_CFG_Y_DENSITY, rows);
    return scanner;
}

/* Scans one grey image; prints each symbol's value with --values; returns the symbols found. */
static long scan(zbar_image_scanner_t *scanner, unsigned char *pixels, int w, int h, long frame, int values) {
    zbar_image_t *image = zbar_image_create();
    zbar_image_set_format(image, zbar_fourcc('Y', '8', '0', '0'));
    zbar_image_set_size(image, w, h);
    zbar_image_set_data(image, pixels, (unsigned long)w * h, NULL);
    int found = zbar_scan_image(scanner, image);
    if (values)
        for (const zbar_symbol_t *s = zbar_image_first_symbol(image); s; s = zbar_symbol_next(s))
            printf("%ld %s\n", frame, zbar_symbol_get_data(s));
    zbar_image_destroy(image);
    return found > 0 ? found : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: zbar_raw CLIP.y4m [--density N] [--symbologies all|conveyor] [--values 1] [--regions FILE]\n");
        return 2;
    }
    int density = 1;
    int conveyor = 0;
    int values = 0;
    const char *regionsPath = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--density")) density = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--symbologies")) conveyor = !strcmp(argv[i + 1], "conveyor");
        else if (!strcmp(argv[i], "--values")) values = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--regions")) regionsPath = argv[i + 1];
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
    zbar_image_scanner_t *scanner = scanner_for(conveyor, density, density);

    /* Regions, in frame order as the trace prints them. */
    long (*regions)[7] = NULL;
    size_t regionCount = 0, next = 0;
    if (regionsPath) {
        FILE *r = fopen(regionsPath, "r");
        if (!r) { perror(regionsPath); return 2; }
        long v[7];
        while (fscanf(r, "%ld %ld %ld %ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7) {
            regions = realloc(regions, (regionCount + 1) * sizeof *regions);
            memcpy(regions[regionCount++], v, sizeof v);
        }
        fclose(r);
    }
    unsigned char *crop = regionsPath ? malloc(luma) : NULL;
    double decoding = 0;

    long frames = 0, symbols = 0;
    char line[1024];
    double start = now();
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "FRAME", 5)) { fprintf(stderr, "%s: damaged at frame %ld\n", argv[1], frames); break; }
        /* Luma read, chroma seeked past: as the agent reads a clip. */
        if (fread(frame, 1, luma, f) != luma || fseek(f, (long)extra, SEEK_CUR) != 0) { fprintf(stderr, "%s: truncated at frame %ld\n", argv[1], frames); break; }
        if (regionsPath) {
            for (; next < regionCount && regions[next][0] < frames; next++) {}
            double began = now();
            for (; next < regionCount && regions[next][0] == frames; next++) {
                long *g = regions[next];
                int width = (int)(g[3] - g[1] + 1), height = (int)(g[4] - g[2] + 1);
                for (int y = 0; y < height; y++) memcpy(crop + (size_t)y * width, frame + (size_t)(g[2] + y) * w + g[1], width);
                zbar_image_scanner_t *fresh = scanner_for(conveyor, (int)g[5], (int)g[6]);
                symbols += scan(fresh, crop, width, height, frames, values);
                zbar_image_scanner_destroy(fresh);
            }
            decoding += now() - began;
        } else {
            symbols += scan(scanner, frame, w, h, frames, values);
        }
        frames++;
    }
    double seconds = regionsPath ? decoding : now() - start;
    printf("frames=%ld symbols=%ld seconds=%.3f fps=%.2f\n", frames, symbols, seconds, frames / seconds);
    return 0;
}
