package kdtree

import "syscall"

// mapPopulate asks mmap to map every page of the file at once.
const mapPopulate = syscall.MAP_POPULATE
