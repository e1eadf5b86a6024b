#!/bin/bash
# make check-deb: the packages of "make deb" on a real Debian 12 system.
#
# debootstraps a minimal Debian 12 (mk/deb-rootfs.sh, cached in build/),
# installs build/deb/*.deb in it with dpkg, makes it a disk image and boots
# it in QEMU (TCG) with the packaged kernel and the initramfs its postinst
# made: Debian's systemd as init, the modules from its own /lib/modules, the
# two igb NICs of vm/run wired back to back.  A systemd unit runs
# devmem-demo from devmem-tools and reports on the serial console.
#
# Exit status: 0 when the demo passed in the booted system.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
debs=$build/deb
work=$debs/check
timeout=${VM_TIMEOUT:-2400}
demo_mb=${DEMO_MB:-16}

[ "$(id -u)" = 0 ] || { echo "check-deb: needs root (debootstrap, chroot)" >&2; exit 2; }
# build/ and what this deletes, extracts into, formats or locks there are
# root's alone (mk/safe-build.sh), before anything is read from them.
. "$top/mk/safe-build.sh"
safe_build check-deb "$build" deb deb/check deb.lock
ls "$debs"/linux-image-*.deb "$debs"/devmem-tools_*.deb "$debs"/VERSION > /dev/null ||
	{ echo "check-deb: no packages in $debs (make deb)" >&2; exit 2; }
version=$(cat "$debs"/VERSION)
deb_config=$(cat "$debs"/CONFIG)
start=$(date +%s)
# make deb and make check-deb share build/deb: one at a time.
exec 9> "$build/deb.lock"
flock -n 9 || { echo "check-deb: another make deb or make check-deb is running" >&2; exit 2; }

# 1. A minimal Debian 12, debootstrapped once (mk/deb-rootfs.sh).
rootfs_tar=$("$top"/mk/deb-rootfs.sh)

# 2. Install the packages into a fresh copy.
rm -rf --one-file-system "$work/root"
mkdir -p "$work/root"
tar -C "$work/root" -xf "$rootfs_tar"
root=$work/root
mkdir -p "$root/tmp/debs"
cp "$debs"/*.deb "$root/tmp/debs/"
# The chroot's /proc, /sys and /dev are mounted in a mount namespace of its
# own: they go away with it, even when this script is killed.
# initramfs-tools would otherwise take the build host's swap from /proc as
# the guest's resume device.
echo RESUME=none > "$root/etc/initramfs-tools/conf.d/resume"
echo "check-deb: dpkg -i $(cd "$debs" && ls -1 ./*.deb | sed 's|^\./||' | tr '\n' ' ')"
unshare --mount --propagation private sh -c '
	for m in proc sys dev; do mount --bind "/$m" "$1/$m" || exit 1; done
	exec chroot "$1" sh -c "dpkg -i /tmp/debs/*.deb"' sh "$root" \
	> "$work/dpkg.log" 2>&1 || { tail -n 30 "$work/dpkg.log" >&2; exit 1; }
rm -rf "$root/tmp/debs"
krel=$(cd "$root/lib/modules" && ls -d ./*-devmem* 2>/dev/null | sed 's|^\./||' | head -1 || true)
[ -n "$krel" ] && [ -f "$root/boot/vmlinuz-$krel" ] && [ -f "$root/boot/initrd.img-$krel" ] ||
	{ echo "check-deb: no kernel and initramfs of a -devmem release in /boot" >&2; exit 1; }
echo "check-deb: installed kernel $krel with its initramfs"

# 3. The system runs the demo once booted, then powers off.
cat > "$root/usr/local/sbin/devmem-check" <<EOF
#!/bin/sh
# check-deb: run by devmem-check.service at boot; the unit powers off after.
exec > /dev/ttyS0 2>&1
udevadm settle
echo "check-deb: running \$(uname -r), init \$(readlink /proc/1/exe)"
rc=0
# The kernel and the packages are the ones make deb built.
[ "\$(uname -r)" = "$krel" ] || { echo "check-deb: running \$(uname -r), not $krel"; rc=1; }
for pkg in linux-image-$krel devmem-tools; do
	v=\$(dpkg-query -W -f='\${Version}' \$pkg)
	echo "check-deb: package \$pkg \$v"
	[ "\$v" = "$version" ] || { echo "check-deb: \$pkg is \$v, not $version"; rc=1; }
done
# The loaded igb is the installed kernel's module (the initramfs holds a
# copy): its build ID is in the file under /lib/modules.
igb_id=\$(tail -c 20 /sys/module/igb/notes/.note.gnu.build-id | od -An -tx1 | tr -d ' \\n')
echo "check-deb: igb module \$(modinfo -n igb), build ID \$igb_id"
[ -n "\$igb_id" ] && od -An -tx1 -v "\$(modinfo -n igb)" | tr -d ' \\n' | grep -q "\$igb_id" ||
	{ echo "check-deb: the loaded igb is not the installed one"; rc=1; }
# devmem-demo leaves a port that carries host traffic alone.
ip link set eth0 up && ip addr add 198.51.100.7/24 dev eth0
devmem-demo 1 > /tmp/refused.log 2>&1
[ \$? = 2 ] && grep -q 'carry addresses or routes' /tmp/refused.log &&
	echo "check-deb: devmem-demo refused a port with an address" ||
	{ cat /tmp/refused.log; echo "check-deb: devmem-demo took a busy port"; rc=1; }
ip addr flush dev eth0 && ip link set eth0 down
devmem-demo $demo_mb || rc=1
# Two of the packaged selftests, through the packaged kselftest runner.
/usr/lib/devmem-tools/selftests/run_kselftest.sh -t net/devmem:igb_nics.sh \
	-t net/devmem:netdev_spec_check.py > /tmp/selftests.log 2>&1
sed -n 's/^\(not \)\{0,1\}ok .*/check-deb: selftest &/p' /tmp/selftests.log
if grep -q '^not ok' /tmp/selftests.log ||
	[ "\$(grep -c '^ok ' /tmp/selftests.log)" != 2 ]; then
	cat /tmp/selftests.log
	rc=1
fi
# The NCCL plugin: dlopen by its bare name finds it, as NCCL_NET_PLUGIN=devmem
# does, ldconfig's cache lists it (the package's trigger), and its harness
# passes on lo (a TCG guest: time scale 20).
lib=\$(ldconfig -p | awk '\$1 == "libnccl-net-devmem.so" { print \$NF; exit }')
if [ -n "\$lib" ] && HARNESS_SKIP=1GiB HARNESS_TIME_SCALE=20 \
	/usr/lib/devmem-tools/nccl/nccl_harness libnccl-net-devmem.so > /tmp/nccl.log 2>&1; then
	echo "check-deb: nccl plugin \$lib: \$(tail -1 /tmp/nccl.log)"
else
	cat /tmp/nccl.log 2>/dev/null
	echo "check-deb: nccl plugin not in ldconfig's cache or its harness failed (\$lib)"; rc=1
fi
# The privileged helper is installed and says how it is used.
if /usr/sbin/nccl-devmem-helper 2>&1 | grep -q '^usage: nccl-devmem-helper -s SOCKET'; then
	echo "check-deb: /usr/sbin/nccl-devmem-helper present"
else
	echo "check-deb: /usr/sbin/nccl-devmem-helper missing or without its usage"; rc=1
fi
# A splat anywhere in the run fails it, as in make check.
if dmesg | grep -E 'WARNING:|BUG:|Call Trace|general protection|Oops'; then
	echo "check-deb: kernel log has a splat"
	rc=1
fi
echo "check-deb: result \$rc"
EOF
chmod 0755 "$root/usr/local/sbin/devmem-check"
cat > "$root/etc/systemd/system/devmem-check.service" <<'EOF'
[Unit]
Description=devmem TCP package check (make check-deb)
After=systemd-udev-settle.service systemd-modules-load.service
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/devmem-check

[Install]
WantedBy=multi-user.target
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/devmem-check.service \
	"$root/etc/systemd/system/multi-user.target.wants/devmem-check.service"
ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$root/etc/fstab"
echo devmem-deb > "$root/etc/hostname"

cp "$root/boot/vmlinuz-$krel" "$root/boot/initrd.img-$krel" "$work/"
# mkfs formats whatever the name leads to: a new file of our own (set -C:
# O_EXCL, which no symbolic link passes), never a link.
rm -f "$work/disk.img"
(set -C && : > "$work/disk.img") && [ -f "$work/disk.img" ] && [ ! -L "$work/disk.img" ] ||
	{ echo "check-deb: cannot make $work/disk.img as a new file" >&2; exit 1; }
mkfs.ext4 -q -F -L devmem-root -d "$root" "$work/disk.img" 4G > /dev/null
rm -rf --one-file-system "$root"

# 4. Boot it.
echo "check-deb: booting Debian 12 with $krel in QEMU (TCG)"
rm -f "$work/console.log"
set +e
timeout -k 10 "$timeout" qemu-system-x86_64 -machine q35 \
	-accel tcg,thread=multi -cpu max,la57=off -smp 2 -m 2G \
	-kernel "$work/vmlinuz-$krel" -initrd "$work/initrd.img-$krel" \
	-append "root=/dev/vda rw console=ttyS0,115200 net.ifnames=0 panic=-1 quiet" \
	-drive file="$work/disk.img",if=virtio,format=raw \
	-display none -no-reboot -nodefaults -serial "file:$work/console.log" \
	-device pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1 \
	-device pcie-root-port,id=rp2,bus=pcie.0,chassis=2,slot=2 \
	-netdev hubport,id=wire0,hubid=0 -netdev hubport,id=wire1,hubid=0 \
	-device igb,bus=rp1,netdev=wire0,mac=52:54:00:de:00:01 \
	-device igb,bus=rp2,netdev=wire1,mac=52:54:00:de:00:02 \
	< /dev/null 2> >(grep -v "is not connected to host network" >&2)
qrc=$?
set -e
tr -d '\r' < "$work/console.log" | grep -E '^(check-deb|demo):' || true
elapsed=$(( $(date +%s) - start ))
if [ $qrc = 124 ]; then
	echo "check-deb: guest timed out after ${timeout}s, packages of DEB_CONFIG=$deb_config (log: $work/console.log)" >&2
	exit 1
fi
if ! tr -d '\r' < "$work/console.log" | grep -qx 'check-deb: result 0'; then
	echo "check-deb: FAIL after ${elapsed}s, packages of DEB_CONFIG=$deb_config, version $version (log: $work/console.log)" >&2
	exit 1
fi
echo "check-deb: passed in ${elapsed}s: Debian 12 took the packages of DEB_CONFIG=$deb_config, version $version (log: $work/console.log)"
