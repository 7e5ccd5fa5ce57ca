// Package demo runs Strata's demonstration: the Nexmark tables fed by the
// generator and three levels of materialized views that mirror FLIP-276's
// example, with a consistency check at every epoch.
//
// # Topology
//
//	bid (Nexmark generator)
//	 └─ t1 = bids and volume per auction and 10 s window  (level 1)
//	     ├─ t2 = per-window statistics over t1               (level 2)
//	     └─ t3 = t2 joined with t1's per-window totals       (level 3, reads t1 and t2)
//
// The tables person and auction are fed by the same generator, as in the
// Nexmark benchmark.
//
// # The consistency check
//
// Every epoch interval, one SELECT reads t1, t2 and t3 at one consistent
// version of the meta service and checks an invariant that holds only at a
// consistent cut: the bid count summed over t1, over t2 and over t3 is the
// same, t1's row count equals the auctions summed over t2 and over t3, and
// within t3 each window's totals from t2 and from t1 agree. A read that mixed epochs (t2 ahead of t1, say) would see different
// totals. At the end every view is verified: its query is recomputed over
// its inputs at one epoch and compared with what is stored.
package demo
