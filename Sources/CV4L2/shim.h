#ifndef SCANTRACK_CV4L2_SHIM_H
#define SCANTRACK_CV4L2_SHIM_H
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

/* v4l2_open and v4l2_ioctl are variadic and the VIDIOC_* request codes are macros:
   Swift can call neither, so each gets a typed wrapper here. */

static inline int scantrack_v4l2_open(const char *path, int flags) {
    return v4l2_open(path, flags);
}
static inline int scantrack_v4l2_close(int fd) { return v4l2_close(fd); }

static inline int scantrack_v4l2_querycap(int fd, struct v4l2_capability *cap) {
    return v4l2_ioctl(fd, VIDIOC_QUERYCAP, cap);
}
static inline int scantrack_v4l2_enum_fmt(int fd, struct v4l2_fmtdesc *desc) {
    return v4l2_ioctl(fd, VIDIOC_ENUM_FMT, desc);
}
static inline int scantrack_v4l2_g_fmt(int fd, struct v4l2_format *fmt) {
    return v4l2_ioctl(fd, VIDIOC_G_FMT, fmt);
}
static inline int scantrack_v4l2_s_fmt(int fd, struct v4l2_format *fmt) {
    return v4l2_ioctl(fd, VIDIOC_S_FMT, fmt);
}
static inline int scantrack_v4l2_s_parm(int fd, struct v4l2_streamparm *parm) {
    return v4l2_ioctl(fd, VIDIOC_S_PARM, parm);
}
static inline int scantrack_v4l2_reqbufs(int fd, struct v4l2_requestbuffers *req) {
    return v4l2_ioctl(fd, VIDIOC_REQBUFS, req);
}
static inline int scantrack_v4l2_querybuf(int fd, struct v4l2_buffer *buf) {
    return v4l2_ioctl(fd, VIDIOC_QUERYBUF, buf);
}
static inline int scantrack_v4l2_qbuf(int fd, struct v4l2_buffer *buf) {
    return v4l2_ioctl(fd, VIDIOC_QBUF, buf);
}
static inline int scantrack_v4l2_dqbuf(int fd, struct v4l2_buffer *buf) {
    return v4l2_ioctl(fd, VIDIOC_DQBUF, buf);
}
static inline int scantrack_v4l2_streamon(int fd) {
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    return v4l2_ioctl(fd, VIDIOC_STREAMON, &type);
}
static inline int scantrack_v4l2_streamoff(int fd) {
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    return v4l2_ioctl(fd, VIDIOC_STREAMOFF, &type);
}
static inline void *scantrack_v4l2_mmap(int fd, size_t length, int64_t offset) {
    return v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
}
static inline int scantrack_v4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }
static inline ssize_t scantrack_v4l2_read(int fd, void *buffer, size_t n) { return v4l2_read(fd, buffer, n); }

static inline uint32_t scantrack_v4l2_fourcc(char a, char b, char c, char d) { return v4l2_fourcc(a, b, c, d); }
static inline uint32_t scantrack_v4l2_pix_fmt_grey(void) { return V4L2_PIX_FMT_GREY; }
static inline uint32_t scantrack_v4l2_pix_fmt_yuyv(void) { return V4L2_PIX_FMT_YUYV; }
static inline uint32_t scantrack_v4l2_pix_fmt_yuv420(void) { return V4L2_PIX_FMT_YUV420; }
static inline uint32_t scantrack_v4l2_buf_type_capture(void) { return V4L2_BUF_TYPE_VIDEO_CAPTURE; }
static inline uint32_t scantrack_v4l2_memory_mmap(void) { return V4L2_MEMORY_MMAP; }
static inline uint32_t scantrack_v4l2_cap_video_capture(void) { return V4L2_CAP_VIDEO_CAPTURE; }
static inline uint32_t scantrack_v4l2_cap_streaming(void) { return V4L2_CAP_STREAMING; }
static inline uint32_t scantrack_v4l2_cap_readwrite(void) { return V4L2_CAP_READWRITE; }
static inline uint32_t scantrack_v4l2_field_any(void) { return V4L2_FIELD_ANY; }
#endif
