#!/bin/busybox sh
# /init of the lane's initramfs: the host's root (9p, read-only) under a
# tmpfs overlay becomes /, the per-run directory is mounted at its host
# path, and stage2.sh from it becomes PID 1.
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /lib/modules/order); do insmod /lib/modules/$m 2>/dev/null || true; done
rundir=$(sed -n 's/.*vmrun=\([^ ]*\).*/\1/p' /proc/cmdline)
opts=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o $opts,ro,cache=loose hostroot /lower || { echo "init: cannot mount the host root"; poweroff -f; }
mount -t tmpfs -o size=75% tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot
mkdir -p /newroot$rundir
mount -t 9p -o $opts vmrun /newroot$rundir || { echo "init: cannot mount the run dir"; poweroff -f; }
mount --move /dev /newroot/dev
umount /proc /sys
exec switch_root /newroot /bin/bash $rundir/stage2.sh
