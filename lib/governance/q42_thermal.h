/* q42_thermal.h -- is the machine thermally critical right now?
 *
 * Reads the Linux thermal sysfs class (<root>/class/thermal/thermal_zone*:
 * temp, trip_point_N_type, trip_point_N_temp; millidegrees Celsius). The
 * root is a parameter so tests can supply a fake tree (q42grd: --sysfs-root
 * or Q42_SYSFS_ROOT). A machine without thermal zones is never critical.
 * Reads only; never writes sysfs.
 */
#ifndef Q42_THERMAL_H
#define Q42_THERMAL_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"

#define Q42_THERMAL_MAX_ZONES 1024u

typedef struct q42_thermal_state {
	uint32_t n_zones;    /* zones whose temperature could be read */
	bool critical;
	int64_t hottest_mc;  /* millidegrees C of the hottest zone (0 when none) */
	char detail[256];    /* which zone, how hot, against which limit */
} q42_thermal_state;

/* Read every zone under sysfs_root (NULL: "/sys"). The state is critical
 * when a zone reaches limit_mc (0: no fixed limit) or, with trip_points,
 * its own trip point of type "critical". Q42_EIO only when the thermal
 * directory exists but cannot be listed. */
Q42_API int q42_thermal_read(q42_thermal_state *st, const char *sysfs_root, int64_t limit_mc,
			     bool trip_points, q42_err *err);

#endif
