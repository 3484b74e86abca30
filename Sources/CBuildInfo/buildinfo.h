#ifndef BLESNIFF_BUILDINFO_H
#define BLESNIFF_BUILDINFO_H
/* The commit a release build is made from: scripts/release/build.sh passes it as
   -Xcc -DBLESNIFF_COMMIT='"<hash>"'. A plain `swift build` leaves it empty. */
#ifndef BLESNIFF_COMMIT
#define BLESNIFF_COMMIT ""
#endif
static inline const char *blesniff_build_commit(void) { return BLESNIFF_COMMIT; }
#endif
