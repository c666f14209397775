/*
 * fwembed's stress init: the only program in the "make stress" initramfs.
 *
 * It runs after the boot self-test of the sanitizer kernel. It mounts
 * debugfs, limits failslab and fail_page_alloc to tasks that ask for
 * failures (the stress test's fault thread), then has the kernel's
 * fw_builtin_stress run its stress test and its fault injection test,
 * has every built-in entry registered for the firmware cache and runs a
 * test suspend, which caches them all and uncaches them after resume, with
 * the firmware loader's cache and uncache debug lines on the console, then
 * asks kmemleak for two scans and copies its report to the console between
 * two marker lines, and ends the emulation. Kernel messages stay on the
 * console: the harness counts sanitizer reports there. Every step prints
 * one line starting with "fwembed-stress: " and saying whether it worked.
 *
 * The emulation ends by a semihosting SYS_EXIT call, which QEMU serves
 * with -semihosting-config enable=on,userspace=on, rather than a reboot:
 * the vexpress restart handler takes a mutex inside an atomic notifier
 * chain, which lockdep reports ("BUG: Invalid wait context") on every
 * reboot of this board. That is the platform's bug, after the test; the
 * reboot stays as a fallback when semihosting is off.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#define DEBUGFS "/debug"
#define SYSLOG_ACTION_CONSOLE_LEVEL 8
#define STRESS DEBUGFS "/fw_builtin_stress"
#define KMEMLEAK DEBUGFS "/kmemleak"
/* Percent of the fault thread's allocations that fail. */
#define FAULT_PROBABILITY "10"
/* kmemleak reports only objects older than 5 s: let the last ones age. */
#define KMEMLEAK_AGE 6
/* The firmware cache uncaches 10 s after resume; allow for slow emulation. */
#define UNCACHE_WAIT 30
/* The firmware loader's own pr_debug lines for caching and uncaching */
#define FW_CACHE_DEBUG "func cache_firmware +p; func uncache_firmware +p"

static int put(const char *path, const char *value)
{
	ssize_t len = (ssize_t)strlen(value);
	int fd, err = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		err = errno;
	else if (write(fd, value, (size_t)len) != len)
		err = errno;
	if (fd >= 0)
		close(fd);
	printf("fwembed-stress: %s <- %s: %s\n", path, value, err ? strerror(err) : "ok");
	fflush(stdout);
	return err ? -1 : 0;
}

/* Fail allocations only in tasks with make_it_fail set, at random. */
static int setup_faults(const char *dir)
{
	char path[128];
	static const char *const attrs[][2] = {
		{ "task-filter", "Y" },
		{ "ignore-gfp-wait", "N" },
		{ "verbose", "0" },
		{ "interval", "1" },
		{ "times", "-1" },
		{ "space", "0" },
		{ "probability", FAULT_PROBABILITY },
	};
	size_t i;
	int ret = 0;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s/%s", dir, attrs[i][0]);
		ret |= put(path, attrs[i][1]);
	}
	return ret;
}

static void print_file(const char *path, const char *what)
{
	char buf[4096];
	ssize_t len;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("fwembed-stress: %s: %s\n", path, strerror(errno));
		return;
	}
	printf("fwembed-stress: %s begin\n", what);
	fflush(stdout);
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)len, stdout);
	fflush(stdout);
	printf("fwembed-stress: %s end\n", what);
	fflush(stdout);
	close(fd);
}

/*
 * Register every built-in entry for the firmware cache, then suspend only
 * as far as freezing tasks (pm_test "freezer"): the PM notifiers still run,
 * so the loader caches every registered name before and uncaches it after.
 * A compressed entry is decoded into the cache; kmemleak then shows
 * whether all of it was freed.
 */
static void firmware_cache_cycle(void)
{
	mkdir("/sys", 0755);
	if (mount("sysfs", "/sys", "sysfs", 0, NULL) != 0)
		perror("fwembed-stress: mount sysfs");
	put(DEBUGFS "/dynamic_debug/control", FW_CACHE_DEBUG);
	/* Let the debug lines, KERN_DEBUG, reach the console. */
	klogctl(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 8);
	put(STRESS, "cache");
	put("/sys/power/pm_test", "freezer");
	put("/sys/power/state", "freeze");
	printf("fwembed-stress: waiting %d s for the firmware cache to uncache\n",
	       UNCACHE_WAIT);
	fflush(stdout);
	sleep(UNCACHE_WAIT);
	klogctl(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 7);
}

/* Semihosting SYS_EXIT with ADP_Stopped_ApplicationExit: QEMU exits with 0. */
static void semihosting_exit(void)
{
	register unsigned long op __asm__("r0") = 0x18;
	register unsigned long reason __asm__("r1") = 0x20026;

	__asm__ volatile("svc 0x123456" : "+r"(op) : "r"(reason) : "memory");
}

int main(void)
{
	int faults;

	mkdir(DEBUGFS, 0755);
	if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL) != 0)
		perror("fwembed-stress: mount debugfs");

	faults = setup_faults("failslab");
	faults |= setup_faults("fail_page_alloc");
	faults |= put(DEBUGFS "/fail_page_alloc/ignore-gfp-highmem", "N");
	faults |= put(DEBUGFS "/fail_page_alloc/min-order", "0");

	/* The init-only entries, requested while the kernel freed them */
	put(STRESS, "init");
	put(STRESS, "stress");
	if (faults)
		printf("fwembed-stress: fault injection not set up, fault test skipped\n");
	else
		put(STRESS, "fault");
	firmware_cache_cycle();

	sleep(KMEMLEAK_AGE);
	put(KMEMLEAK, "scan");
	put(KMEMLEAK, "scan");
	print_file(KMEMLEAK, "kmemleak report");

	printf("fwembed-stress: done\n");
	fflush(stdout);
	/* Let the console drain before QEMU goes. */
	tcdrain(STDOUT_FILENO);
	sleep(1);
	sync();
	semihosting_exit();
	reboot(RB_AUTOBOOT);
	perror("fwembed-stress: reboot");
	return 1;
}
