#ifndef SCANTRACK_CTIFF_SHIM_H
#define SCANTRACK_CTIFF_SHIM_H
#include <stdint.h>
#include <string.h>
#include <tiffio.h>

/// A TIFF file held in memory, read through libtiff's client procedures (it never touches a file).
typedef struct {
    const unsigned char *data;
    toff_t size;
    toff_t position;
} scantrack_tiff_memory;

static tsize_t scantrack_tiff_read(thandle_t handle, tdata_t buffer, tsize_t count) {
    scantrack_tiff_memory *memory = (scantrack_tiff_memory *)handle;
    if (count <= 0 || memory->position >= memory->size) return 0;
    toff_t left = memory->size - memory->position;
    toff_t n = (toff_t)count < left ? (toff_t)count : left;
    memcpy(buffer, memory->data + memory->position, (size_t)n);
    memory->position += n;
    return (tsize_t)n;
}

static tsize_t scantrack_tiff_write(thandle_t handle, tdata_t buffer, tsize_t count) {
    (void)handle; (void)buffer; (void)count;
    return 0;
}

static toff_t scantrack_tiff_seek(thandle_t handle, toff_t offset, int whence) {
    scantrack_tiff_memory *memory = (scantrack_tiff_memory *)handle;
    toff_t base = whence == SEEK_CUR ? memory->position : whence == SEEK_END ? memory->size : 0;
    if (offset > UINT64_MAX - base) return (toff_t)-1;
    memory->position = base + offset;
    return memory->position;
}

static int scantrack_tiff_close(thandle_t handle) { (void)handle; return 0; }

static toff_t scantrack_tiff_size(thandle_t handle) { return ((scantrack_tiff_memory *)handle)->size; }

static int scantrack_tiff_map(thandle_t handle, tdata_t *base, toff_t *size) {
    (void)handle; (void)base; (void)size;
    return 0;
}

static void scantrack_tiff_unmap(thandle_t handle, tdata_t base, toff_t size) {
    (void)handle; (void)base; (void)size;
}

/// Opens the memory for reading, libtiff's messages off (errors come back as NULL or 0).
static inline TIFF *scantrack_tiff_open(scantrack_tiff_memory *memory) {
    TIFFSetErrorHandler(NULL);
    TIFFSetWarningHandler(NULL);
    return TIFFClientOpen("memory", "rm", (thandle_t)memory, scantrack_tiff_read, scantrack_tiff_write,
                          scantrack_tiff_seek, scantrack_tiff_close, scantrack_tiff_size, scantrack_tiff_map,
                          scantrack_tiff_unmap);
}

/// TIFFGetField is variadic: the first image's width and height, 0 when it has none.
static inline int scantrack_tiff_dimensions(TIFF *tiff, uint32_t *width, uint32_t *height) {
    return TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, width) == 1 && TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, height) == 1;
}
#endif
