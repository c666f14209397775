/*
 * fwembed's test init: the only program in the test initramfs.
 *
 * It runs after the kernel's built-in firmware self-test. It mounts debugfs,
 * copies the built-in firmware listing to the console between two marker
 * lines for the harness to read, and reboots; QEMU runs with -no-reboot, so
 * the reboot ends the emulation. Kernel messages are kept off the console
 * meanwhile, since one arriving mid-line would split a listing line.
 *
 * The kernel has freed its init memory by the time init runs, and with it
 * the init-only entries, which the listing marks "freed". If the kernel
 * has the kernel's own firmware test module (CONFIG_TEST_FIRMWARE), each
 * of them is requested once more through it, and the result printed: the
 * built-in copy must no longer be served.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#define LISTING "/debug/firmware/builtin"
#define TRIGGER "/sys/devices/virtual/misc/test_firmware/trigger_request"
#define FREED "\tfreed"
#define SYSLOG_ACTION_CONSOLE_LEVEL 8

/* Print the listing between the markers; return a copy of it, or NULL. */
static char *print_listing(void)
{
	size_t used = 0, room = 0;
	char *text = NULL, *more;
	ssize_t len;
	int fd;

	mkdir("/debug", 0755);
	if (mount("debugfs", "/debug", "debugfs", 0, NULL) != 0) {
		perror("fwembed-init: mount debugfs");
		return NULL;
	}
	fd = open(LISTING, O_RDONLY);
	if (fd < 0) {
		perror("fwembed-init: open " LISTING);
		return NULL;
	}
	printf("fwembed-init: listing begin\n");
	fflush(stdout);
	do {
		if (room - used < 4096) {
			room = room ? 2 * room : 65536;
			more = realloc(text, room + 1);
			if (!more) {
				perror("fwembed-init: realloc");
				break;
			}
			text = more;
		}
		len = read(fd, text + used, room - used);
		if (len > 0) {
			fwrite(text + used, 1, (size_t)len, stdout);
			used += (size_t)len;
		}
	} while (len > 0);
	fflush(stdout);
	printf("fwembed-init: listing end\n");
	close(fd);
	if (text)
		text[used] = '\0';
	return text;
}

/*
 * Request each entry that the listing says was freed through the test
 * module's trigger_request, and print what the kernel answered.
 */
static void request_freed(char *listing)
{
	char *line, *rest = listing, *tab;
	size_t len;
	int fd;

	if (!listing || !strstr(listing, FREED "\n"))
		return;
	mkdir("/sys", 0755);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	if (access(TRIGGER, W_OK) != 0) {
		printf("fwembed-init: no %s (CONFIG_TEST_FIRMWARE): freed entries not requested\n",
		       TRIGGER);
		return;
	}
	while ((line = strsep(&rest, "\n"))) {
		len = strlen(line);
		if (len < strlen(FREED) || strcmp(line + len - strlen(FREED), FREED))
			continue;
		tab = strchr(line, '\t');
		*tab = '\0';
		fd = open(TRIGGER, O_WRONLY);
		if (fd >= 0 && write(fd, line, strlen(line)) >= 0)
			printf("fwembed-init: after boot: \"%s\": served\n", line);
		else
			printf("fwembed-init: after boot: \"%s\": error %d\n",
			       line, -errno);
		if (fd >= 0)
			close(fd);
	}
}

int main(void)
{
	/* Like 'dmesg -n 1': only emergency messages reach the console. */
	char *listing;

	klogctl(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 1);
	listing = print_listing();
	request_freed(listing);
	free(listing);
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);
	perror("fwembed-init: reboot");
	return 1;
}
