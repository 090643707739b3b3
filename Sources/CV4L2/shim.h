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

static inline int scantrack_v4l2_g_parm(int fd, struct v4l2_streamparm *parm) {
    return v4l2_ioctl(fd, VIDIOC_G_PARM, parm);
}
static inline int scantrack_v4l2_queryctrl(int fd, struct v4l2_queryctrl *query) {
    return v4l2_ioctl(fd, VIDIOC_QUERYCTRL, query);
}
static inline int scantrack_v4l2_querymenu(int fd, struct v4l2_querymenu *menu) {
    return v4l2_ioctl(fd, VIDIOC_QUERYMENU, menu);
}
static inline int scantrack_v4l2_g_ctrl(int fd, struct v4l2_control *control) {
    return v4l2_ioctl(fd, VIDIOC_G_CTRL, control);
}
static inline int scantrack_v4l2_s_ctrl(int fd, struct v4l2_control *control) {
    return v4l2_ioctl(fd, VIDIOC_S_CTRL, control);
}
static inline uint32_t scantrack_v4l2_ctrl_flag_next(void) { return V4L2_CTRL_FLAG_NEXT_CTRL; }
static inline uint32_t scantrack_v4l2_ctrl_flag_disabled(void) { return V4L2_CTRL_FLAG_DISABLED; }
static inline uint32_t scantrack_v4l2_ctrl_flag_read_only(void) { return V4L2_CTRL_FLAG_READ_ONLY; }
static inline uint32_t scantrack_v4l2_ctrl_flag_inactive(void) { return V4L2_CTRL_FLAG_INACTIVE; }
static inline uint32_t scantrack_v4l2_cap_timeperframe(void) { return V4L2_CAP_TIMEPERFRAME; }
/* The controls the agent maps its own keys onto. */
static inline uint32_t scantrack_v4l2_cid_exposure_auto(void) { return V4L2_CID_EXPOSURE_AUTO; }
static inline uint32_t scantrack_v4l2_cid_exposure_absolute(void) { return V4L2_CID_EXPOSURE_ABSOLUTE; }
static inline uint32_t scantrack_v4l2_cid_exposure_auto_priority(void) { return V4L2_CID_EXPOSURE_AUTO_PRIORITY; }
static inline uint32_t scantrack_v4l2_cid_autogain(void) { return V4L2_CID_AUTOGAIN; }
static inline uint32_t scantrack_v4l2_cid_focus_auto(void) { return V4L2_CID_FOCUS_AUTO; }
static inline uint32_t scantrack_v4l2_cid_focus_absolute(void) { return V4L2_CID_FOCUS_ABSOLUTE; }
static inline uint32_t scantrack_v4l2_exposure_manual(void) { return V4L2_EXPOSURE_MANUAL; }
static inline uint32_t scantrack_v4l2_exposure_aperture_priority(void) { return V4L2_EXPOSURE_APERTURE_PRIORITY; }
static inline uint32_t scantrack_v4l2_ctrl_type_integer(void) { return V4L2_CTRL_TYPE_INTEGER; }
static inline uint32_t scantrack_v4l2_ctrl_type_boolean(void) { return V4L2_CTRL_TYPE_BOOLEAN; }
static inline uint32_t scantrack_v4l2_ctrl_type_menu(void) { return V4L2_CTRL_TYPE_MENU; }
static inline uint32_t scantrack_v4l2_ctrl_type_integer_menu(void) { return V4L2_CTRL_TYPE_INTEGER_MENU; }
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
