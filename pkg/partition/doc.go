// Package partition splits a joint forward+backward graph (package
// jointgraph) into a forward and a backward graph, as AOTAutograd's
// partitioners do (torch/_functorch/partitioners.py):
//
//   - Default is default_partition: the forward computes what the original
//     forward computed and saves every forward value the backward reads.
//   - MinCut is min_cut_rematerialization_partition: a minimum cut of the
//     joint graph, weighted by tensor sizes, decides what to save; cheap ops
//     after the cut are recomputed in the backward (mincut.go).
//
// Split copies the two graphs into modules of their own; SplitLazy reads
// them from the joint in place (Partition.Source), for the encoders.
//
// The maximum flow is this package's own (maxflow.go): min-cut needs the
// sink side of the cut, read from the residual graph of a maximum flow, and
// gonum's graph/network.MaxFlowDinic returns only the flow's value, not
// the flow or its residual graph. TestMaxFlowMatchesGonum checks the two
// agree on the value.
//
// zerofill.go makes constant fills (zeros_like, new_zeros, zeros, full of
// a constant) from their static metadata, so they are never saved and read
// nothing from the graph, as AOTAutograd's min-cut recomputes them.
package partition
