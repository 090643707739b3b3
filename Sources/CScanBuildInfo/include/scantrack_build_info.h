#ifndef SCANTRACK_BUILD_INFO_H
#define SCANTRACK_BUILD_INFO_H

/// The commit the programs were built from: Package.swift passes it in as SCANTRACK_COMMIT (from
/// git, or the SCANTRACK_COMMIT variable where there is no .git, as in an image build); "unknown"
/// without either. A C string because Swift's conditional compilation takes no values.
const char *scantrack_build_commit(void);

#endif
