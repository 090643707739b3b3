#ifndef SCANTRACK_CZBAR_SHIM_H
#define SCANTRACK_CZBAR_SHIM_H
#include <zbar.h>

/// zbar_fourcc is a macro; Swift sees this function instead.
static inline unsigned long scantrack_zbar_fourcc(char a, char b, char c, char d) {
    return zbar_fourcc(a, b, c, d);
}

/// The grey 8-bit format ("Y800") that every frame is handed to zbar in.
static inline unsigned long scantrack_zbar_format_y800(void) {
    return zbar_fourcc('Y', '8', '0', '0');
}
#endif
