// Command kdbuild loads a triangle scene and builds a kd-tree over it.
package main

func main() {}
