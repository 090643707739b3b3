// libavformat/libavcodec (FFmpeg 5.1 in Debian bookworm) for RTSP cameras: what Swift cannot
// reach through the headers alone (error macros, bit flags defined as macros).
#ifndef SCANTRACK_CAVCODEC_SHIM_H
#define SCANTRACK_CAVCODEC_SHIM_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <string.h>

static inline int scantrack_av_error_again(void) { return AVERROR(EAGAIN); }
static inline int scantrack_av_error_eof(void) { return AVERROR_EOF; }
static inline int scantrack_av_error_exit(void) { return AVERROR_EXIT; }
static inline int64_t scantrack_av_nopts(void) { return AV_NOPTS_VALUE; }
static inline int scantrack_av_frame_corrupt(const AVFrame *frame) {
    return (frame->flags & AV_FRAME_FLAG_CORRUPT) != 0 || frame->decode_error_flags != 0;
}
/// True when plane 0 holds the luma, 8 bits a sample, one byte apart (YUV planar and semi-planar,
/// gray): the frame's luma is copied as it is; anything else goes through swscale.
static inline int scantrack_av_luma_in_plane0(int format) {
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    if (d == NULL || (d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM |
                                   AV_PIX_FMT_FLAG_HWACCEL)) != 0) return 0;
    return d->comp[0].plane == 0 && d->comp[0].depth == 8 && d->comp[0].step == 1 && d->comp[0].offset == 0 &&
           d->comp[0].shift == 0;
}
/// No frame held back for reordering; damaged frames handed over (flagged) so that they are
/// counted, then dropped.
static inline void scantrack_av_set_low_delay(AVCodecContext *context) {
    context->flags |= AV_CODEC_FLAG_LOW_DELAY | AV_CODEC_FLAG_OUTPUT_CORRUPT;
    // RTP hands over NAL units, not whole pictures: a picture's slices may come in several packets.
    context->flags2 |= AV_CODEC_FLAG2_CHUNKS;
}
/// Copies the luma of `frame` (plane 0, see scantrack_av_luma_in_plane0) into `out`, width x height.
static inline void scantrack_av_copy_luma(const AVFrame *frame, uint8_t *out) {
    for (int y = 0; y < frame->height; y++)
        memcpy(out + (size_t)y * frame->width, frame->data[0] + (ptrdiff_t)y * frame->linesize[0], frame->width);
}
/// Converts `frame` to 8-bit gray into `out` through a cached swscale context; < 0 on failure.
static inline int scantrack_av_scale_gray(struct SwsContext **context, const AVFrame *frame, uint8_t *out) {
    *context = sws_getCachedContext(*context, frame->width, frame->height, (enum AVPixelFormat)frame->format,
                                    frame->width, frame->height, AV_PIX_FMT_GRAY8, SWS_BILINEAR, NULL, NULL, NULL);
    if (*context == NULL) return -1;
    uint8_t *planes[4] = {out, NULL, NULL, NULL};
    int strides[4] = {frame->width, 0, 0, 0};
    return sws_scale(*context, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, planes, strides);
}
static inline void scantrack_av_quiet(void) { av_log_set_level(AV_LOG_QUIET); }
static inline int scantrack_sws_bilinear(void) { return SWS_BILINEAR; }

#endif
