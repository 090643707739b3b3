#ifndef SCANTRACK_CPNG_SHIM_H
#define SCANTRACK_CPNG_SHIM_H
#include <png.h>

/// PNG_IMAGE_VERSION and PNG_FORMAT_GRAY are macros; Swift sees these instead.
static inline png_uint_32 scantrack_png_image_version(void) { return PNG_IMAGE_VERSION; }
static inline png_uint_32 scantrack_png_format_gray(void) { return PNG_FORMAT_GRAY; }
#endif
