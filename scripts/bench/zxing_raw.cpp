// Raw zxing-cpp on every whole frame of a YUV4MPEG2 clip: the second baseline ScanTrack's replay
// is measured against (the first is zbar_raw). Luma handed to ReadBarcodes as it is, nothing else:
// no localiser, tracking or events.
//
//   zxing_raw CLIP.y4m [--formats LIST] [--try-harder 0|1] [--try-rotate 0|1] [--values] [--regions FILE]
//
// LIST: zxing-cpp's format names, comma-separated (default: the agent's conveyor set plus
// DataMatrix). --try-harder 1 (default) is zxing-cpp's own default: more scan lines, rotations and
// inversion off here as in the agent; --try-rotate 1 also reads each frame turned 90° (columns), as
// a reader of labels at any angle would ask of it. --values prints each frame's values (for counting checks).
// --regions FILE: only these crops of each frame (zbar_raw's format: FRAME X0 Y0 X1 Y1 ROWSTEP
// COLUMNSTEP; the steps are not used, zxing-cpp chooses its own lines), the time decoding only.
// Prints one line: frames, symbols, seconds, frames/s.
#include <ZXing/ReadBarcode.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: zxing_raw CLIP.y4m [--formats LIST] [--try-harder 0|1] [--try-rotate 0|1] [--values]\n");
        return 2;
    }
    std::string formats = "EAN13,EAN8,UPCA,UPCE,Code128,Code39,ITF,QRCode,DataMatrix";
    bool tryHarder = true;
    bool tryRotate = false;
    bool values = false;
    const char *regionsPath = nullptr;
    for (int i = 2; i < argc; i++) {
        if (!std::strcmp(argv[i], "--regions") && i + 1 < argc) { regionsPath = argv[++i]; continue; }
        if (!std::strcmp(argv[i], "--formats") && i + 1 < argc) formats = argv[++i];
        else if (!std::strcmp(argv[i], "--try-harder") && i + 1 < argc) tryHarder = std::atoi(argv[++i]) != 0;
        else if (!std::strcmp(argv[i], "--try-rotate") && i + 1 < argc) tryRotate = std::atoi(argv[++i]) != 0;
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
    options.setTryRotate(tryRotate);
    options.setTryInvert(false);
    options.setMaxNumberOfSymbols(255);

    std::vector<std::array<long, 7>> regions;
    if (regionsPath) {
        FILE *r = std::fopen(regionsPath, "r");
        if (!r) { std::perror(regionsPath); return 2; }
        std::array<long, 7> v{};
        while (std::fscanf(r, "%ld %ld %ld %ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7)
            regions.push_back(v);
        std::fclose(r);
    }
    size_t next = 0;
    double decoding = 0;

    long frames = 0, symbols = 0;
    char line[1024];
    auto start = std::chrono::steady_clock::now();
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, "FRAME", 5)) { std::fprintf(stderr, "%s: damaged at frame %ld\n", argv[1], frames); break; }
        // Luma read, chroma seeked past: as the agent reads a clip.
        if (std::fread(frame.data(), 1, luma, f) != luma || std::fseek(f, long(extra), SEEK_CUR) != 0) {
            std::fprintf(stderr, "%s: truncated at frame %ld\n", argv[1], frames);
            break;
        }
        if (regionsPath) {
            while (next < regions.size() && regions[next][0] < frames) next++;
            auto began = std::chrono::steady_clock::now();
            for (; next < regions.size() && regions[next][0] == frames; next++) {
                auto &g = regions[next];
                ZXing::ImageView crop(frame.data() + g[2] * w + g[1], int(g[3] - g[1] + 1), int(g[4] - g[2] + 1),
                                      ZXing::ImageFormat::Lum, w);
                auto found = ZXing::ReadBarcodes(crop, options);
                symbols += long(found.size());
                if (values)
                    for (auto &barcode : found) std::printf("%ld %s\n", frames, barcode.text().c_str());
            }
            decoding += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
            frames++;
            continue;
        }
        auto found = ZXing::ReadBarcodes(ZXing::ImageView(frame.data(), w, h, ZXing::ImageFormat::Lum), options);
        symbols += long(found.size());
        if (values)
            for (auto &barcode : found) std::printf("%ld %s\n", frames, barcode.text().c_str());
        frames++;
    }
    double seconds = regionsPath ? decoding
                                 : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("frames=%ld symbols=%ld seconds=%.3f fps=%.2f\n", frames, symbols, seconds, frames / seconds);
    return 0;
}
