// Package partitionset generates the Partitions of every PartitionSet of
// the shard, as kcp's partitionset controller does:
//
//   - the Shards of the installation (those of the root logical cluster)
//     that the set's shardSelector selects are grouped by the values of the
//     set's dimensions (label keys); a shard lacking one of them is in no
//     group;
//   - each group gets one Partition in the set's logical cluster, named
//     <set>-<dimension values, lower case, in the order of the sorted
//     dimensions>-<random suffix> (kcp's generateName), owned by the set,
//     whose selector has the group's dimension values and the shardSelector's
//     matchLabels as matchLabels and the shardSelector's matchExpressions;
//     as in kcp, there are none when the set has neither dimensions nor
//     matchLabels;
//   - status.count is the number of groups; PartitionSetValid tells whether
//     the shard selector can be evaluated, PartitionsReady whether the
//     Partitions are up to date.
//
// Unlike kcp, which deletes a Partition and creates another (of a new name)
// whenever its selector should change, a Partition whose dimension values
// still name a group is updated in place, so that APIExportEndpointSlices
// naming it keep working when the shardSelector changes. Generated
// Partitions also carry their dimension values as labels
// (<dimension>=<value>), which kcp does not set, so that they can be
// selected: kubectl get partitions -l region=eu.
//
// The Partitions of a set are read from the API server, not from a cache,
// before anything is created: with generated names, a stale cache would
// create a second Partition for a group (kcp does the same for that reason).
// Deleted sets leave their Partitions to the garbage collector.
package partitionset
