// Raw zxing-cpp on every whole frame of a YUV4MPEG2 clip: the second baseline ScanTrack's replay
// is measured against (the first is zbar_raw). Luma handed to ReadBarcodes as it is, nothing else:
// no localiser, tracking or events.
//
//   zxing_raw CLIP.y4m [--formats LIST] [--try-harder 0|1] [--values]
//
// LIST: zxing-cpp's format names, comma-separated (default: the agent's conveyor set plus
// DataMatrix). --try-harder 1 (default) is zxing-cpp's own default: more scan lines, rotations and
// inversion off here as in the agent. --values prints each frame's values (for counting checks).
// Prints one line: frames, symbols, seconds, frames/s.
#include <ZXing/ReadBarcode.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: zxing_raw CLIP.y4m [--formats LIST] [--try-harder 0|1] [--values]\n");
        return 2;
    }
    std::string formats = "EAN13,EAN8,UPCA,UPCE,Code128,Code39,ITF,QRCode,DataMatrix";
    bool tryHarder = true;
    bool values = false;
    for (int i = 2; i < argc; i++) {
        if (!std::strcmp(argv[i], "--formats") && i + 1 < argc) formats = argv[++i];
        else if (!std::strcmp(argv[i], "--try-harder") && i + 1 < argc) tryHarder = std::atoi(argv[++i]) != 0;
        else if (!std::strcmp(argv[i], "--values")) values = true;
    }
    FILE *f = std::fopen(argv[1], "rb");
    if (!f) { std::perror(argv[1]); return 2; }
    char header[4096];
    if (!std::fgets(header, sizeof header, f)) { std::fprintf(stderr, "%s: no header\n", argv[1]); return 2; }
    int w = 0, h = 0;
    char chroma[32] = "420jpeg";
    for (char *tok = std::strtok(header, " \n"); tok; tok = std::strtok(nullptr, " \n")) {
        if (tok[0] == 'W') w = std::atoi(tok + 1);
        else if (tok[0] == 'H') h = std::atoi(tok + 1);
        else if (tok[0] == 'C') std::snprintf(chroma, sizeof chroma, "%s", tok + 1);
    }
    size_t luma = size_t(w) * h, cw = (w + 1) / 2, ch = (h + 1) / 2, extra = 0;
    if (!std::strncmp(chroma, "mono", 4)) extra = 0;
    else if (!std::strncmp(chroma, "420", 3)) extra = 2 * cw * ch;
    else if (!std::strcmp(chroma, "422")) extra = 2 * cw * h;
    else if (!std::strcmp(chroma, "444")) extra = 2 * luma;
    std::vector<unsigned char> frame(luma + extra);

    ZXing::ReaderOptions options;
    options.setFormats(ZXing::BarcodeFormats(formats));
    options.setTryHarder(tryHarder);
    options.setTryRotate(false);
    options.setTryInvert(false);
    options.setMaxNumberOfSymbols(255);

    long frames = 0, symbols = 0;
    char line[1024];
    auto start = std::chrono::steady_clock::now();
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, "FRAME", 5)) { std::fprintf(stderr, "%s: damaged at frame %ld\n", argv[1], frames); break; }
        if (std::fread(frame.data(), 1, luma + extra, f) != luma + extra) {
            std::fprintf(stderr, "%s: truncated at frame %ld\n", argv[1], frames);
            break;
        }
        auto found = ZXing::ReadBarcodes(ZXing::ImageView(frame.data(), w, h, ZXing::ImageFormat::Lum), options);
        symbols += long(found.size());
        if (values)
            for (auto &barcode : found) std::printf("%ld %s\n", frames, barcode.text().c_str());
        frames++;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("frames=%ld symbols=%ld seconds=%.3f fps=%.2f\n", frames, symbols, seconds, frames / seconds);
    return 0;
}
