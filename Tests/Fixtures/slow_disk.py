#!/usr/bin/python3
"""A folder mounted over another with FUSE, whose writes to data files can be made slow: a disk
that holds a writer inside `pwrite`. While BACKING/slow-writes holds "SECONDS [FROM]", every write
to a file under a `data` folder at offset FROM (0 if not given) or past waits SECONDS before it
is made; reads, the index and every other file go straight through.

Usage: slow_disk.py BACKING MOUNTPOINT   (runs in the foreground until unmounted; needs
Debian's python3-fuse and fuse3, and /dev/fuse)
"""
import errno
import os
import sys
import time

import fuse
from fuse import Fuse

fuse.fuse_python_api = (0, 2)


class SlowDisk(Fuse):
    def __init__(self, backing, *args, **kw):
        Fuse.__init__(self, *args, **kw)
        self.backing = backing
        disk = self

        class File:
            def __init__(self, path, flags, *mode):
                self.fd = os.open(disk.real(path), flags, *mode)
                self.slow = "/data/" in path

            def read(self, length, offset):
                return os.pread(self.fd, length, offset)

            def write(self, buffer, offset):
                if self.slow:
                    seconds, start = disk.delay()
                    if offset >= start:
                        time.sleep(seconds)
                return os.pwrite(self.fd, buffer, offset)

            def release(self, flags):
                os.close(self.fd)

            def flush(self):
                return 0

            def fsync(self, datasync):
                os.fdatasync(self.fd) if datasync else os.fsync(self.fd)

            def fgetattr(self):
                return os.fstat(self.fd)

            def ftruncate(self, length):
                os.ftruncate(self.fd, length)

        self.file_class = File

    def real(self, path):
        return self.backing + path

    def delay(self):
        """The seconds a slow write waits, and the offset slow writes start at."""
        try:
            with open(os.path.join(self.backing, "slow-writes")) as control:
                fields = control.read().split()
        except OSError:
            return 0, 0
        return float(fields[0]), int(fields[1]) if len(fields) > 1 else 0

    def getattr(self, path):
        return os.lstat(self.real(path))

    def readdir(self, path, offset):
        for name in [".", ".."] + os.listdir(self.real(path)):
            yield fuse.Direntry(name)

    def access(self, path, mode):
        if not os.access(self.real(path), mode):
            return -errno.EACCES

    def mkdir(self, path, mode):
        os.mkdir(self.real(path), mode)

    def rmdir(self, path):
        os.rmdir(self.real(path))

    def unlink(self, path):
        os.unlink(self.real(path))

    def rename(self, old, new):
        os.rename(self.real(old), self.real(new))

    def link(self, target, name):
        os.link(self.real(target), self.real(name))

    def chmod(self, path, mode):
        os.chmod(self.real(path), mode)

    def truncate(self, path, length):
        os.truncate(self.real(path), length)

    def utimens(self, path, accessed, modified):
        os.utime(self.real(path), ns=(accessed.tv_sec * 10**9 + accessed.tv_nsec,
                                      modified.tv_sec * 10**9 + modified.tv_nsec))

    def statfs(self):
        return os.statvfs(self.backing)


if __name__ == "__main__":
    backing, mountpoint = os.path.abspath(sys.argv[1]), sys.argv[2]
    disk = SlowDisk(backing, dash_s_do="setsingle")
    disk.multithreaded = True
    disk.fuse_args.mountpoint = mountpoint
    disk.fuse_args.add("fsname=slowdisk")
    disk.fuse_args.setmod("foreground")
    disk.main()
