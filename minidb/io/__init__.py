"""The disk layer: all file I/O of minidb, on real files or a simulated disk.

Public surface::

    Disk, File            the interface (minidb.io.base)
    OSDisk                real files in an OS directory
    SimDisk, CrashMode    a disk that records writes and fsyncs and can crash
    Event, CrashPoint, crash_points
                          the write record and crash-point enumeration
    created               what this process created on real files, for a watcher
                          (minidb.io.created: created, created_tree, makedirs, watching)
"""

from minidb.io import created
from minidb.io.base import Disk, File
from minidb.io.osdisk import OSDisk
from minidb.io.simdisk import CrashMode, CrashPoint, Event, SimDisk, crash_points

__all__ = ["Disk", "File", "OSDisk", "SimDisk", "CrashMode", "CrashPoint", "Event", "crash_points", "created"]
