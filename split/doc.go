// Package split moves the triangle references of every node of a kd-tree
// level to their left and right children at once, with a segmented scan
// computing each reference's address in the next level.
package split
