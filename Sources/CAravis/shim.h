// Aravis (GenICam: GigE Vision and USB3 Vision) for ScanTrack's GenICam adapter. Only
// ScanGenICam imports this module.
#ifndef SCANTRACK_CARAVIS_SHIM_H
#define SCANTRACK_CARAVIS_SHIM_H

#include <arv.h>

// g_clear_error and g_object_unref through functions Swift can call with plain pointers.
static inline void scantrack_arv_free_error(GError *error) { if (error) g_error_free(error); }
static inline const char *scantrack_arv_error_message(const GError *error) { return error ? error->message : "unknown error"; }
static inline void scantrack_arv_unref(void *object) { if (object) g_object_unref(object); }

// Pixel formats are macros with a cast, which Swift does not import.
static const ArvPixelFormat scantrack_arv_mono8 = ARV_PIXEL_FORMAT_MONO_8;

// The fake camera's registers (Aravis's test camera), for the test tool that serves a clip.
static const guint32 scantrack_arv_fake_sensor_width = ARV_FAKE_CAMERA_REGISTER_SENSOR_WIDTH;
static const guint32 scantrack_arv_fake_sensor_height = ARV_FAKE_CAMERA_REGISTER_SENSOR_HEIGHT;
static const guint32 scantrack_arv_fake_width = ARV_FAKE_CAMERA_REGISTER_WIDTH;
static const guint32 scantrack_arv_fake_height = ARV_FAKE_CAMERA_REGISTER_HEIGHT;
static const guint32 scantrack_arv_fake_frame_period_us = ARV_FAKE_CAMERA_REGISTER_ACQUISITION_FRAME_PERIOD_US;

// The fake camera's share of GVSP packets it does not send (0…1): a lossy network, for tests.
static inline void scantrack_arv_fake_set_lost_ratio(ArvGvFakeCamera *camera, double ratio) {
    g_object_set(camera, "gvsp-lost-ratio", ratio, NULL);
}

// The buffer's bytes, writable: a fill-pattern callback paints into them (their size is stamped
// only after the callback; the fake camera's payload bounds them).
static inline void *scantrack_arv_buffer_bytes(ArvBuffer *buffer) {
    size_t ignored = 0;
    return (void *) arv_buffer_get_data(buffer, &ignored);
}

#endif
