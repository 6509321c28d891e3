// Package updateorder holds the user-configurable parts of a rolling update's order, shared by the
// workload planners: priorityStrategy (weightPriority, orderPriority) ranks pods by their labels,
// and scatterStrategy spreads the pods matching a label over the whole update order instead of
// updating them next to each other. Both are pure functions of pod labels.
package updateorder
