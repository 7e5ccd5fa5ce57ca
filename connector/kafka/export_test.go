package kafka

// LatestResolved reports whether r resolved the end offset of the Latest
// startup mode.
func LatestResolved(r *Reader) bool { return r.latest.Load() >= 0 }
