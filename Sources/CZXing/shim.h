#ifndef SCANTRACK_CZXING_SHIM_H
#define SCANTRACK_CZXING_SHIM_H
// zxing-cpp's C API, from the copy scripts/build-zxing.sh builds (pkg-config scantrack-zxing).
#include <ZXing/ZXingC.h>
#endif
