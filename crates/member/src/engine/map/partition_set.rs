//! A set of partition ids as one bit each: what a query's shares covered. Every indexed query
//! records each of its member's partitions (271 by default) and merges the reactors' sets; as
//! a `BTreeSet<u16>` that was a node allocation per few partitions and 4 % of an indexed
//! `values()` call's member CPU, as bits it is five words.

/// Partition ids, one bit each.
#[derive(Debug, Clone, Default)]
pub(crate) struct PartitionSet {
    words: Vec<u64>,
}

impl PartitionSet {
    pub(crate) fn insert(&mut self, partition: u16) {
        let (word, bit) = (usize::from(partition) / 64, partition % 64);
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << bit;
    }

    pub(crate) fn contains(&self, partition: u16) -> bool {
        let (word, bit) = (usize::from(partition) / 64, partition % 64);
        self.words.get(word).is_some_and(|word| word & (1 << bit) != 0)
    }

    pub(crate) fn len(&self) -> usize {
        self.words.iter().map(|word| word.count_ones() as usize).sum()
    }

    /// The partitions in both sets.
    pub(crate) fn intersection(&self, other: &PartitionSet) -> PartitionSet {
        PartitionSet { words: self.words.iter().zip(&other.words).map(|(a, b)| a & b).collect() }
    }

    /// Adds every partition of `other`.
    pub(crate) fn union_with(&mut self, other: &PartitionSet) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        self.words.iter_mut().zip(&other.words).for_each(|(a, b)| *a |= b);
    }

    /// The partitions, in ascending order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        self.words.iter().enumerate().flat_map(|(at, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                Some((at * 64) as u16 + bit as u16)
            })
        })
    }
}

impl Extend<u16> for PartitionSet {
    fn extend<I: IntoIterator<Item = u16>>(&mut self, partitions: I) {
        partitions.into_iter().for_each(|partition| self.insert(partition));
    }
}

impl FromIterator<u16> for PartitionSet {
    fn from_iter<I: IntoIterator<Item = u16>>(partitions: I) -> PartitionSet {
        let mut set = PartitionSet::default();
        set.extend(partitions);
        set
    }
}

/// Equal when they hold the same partitions (however many words each has grown to).
impl PartialEq for PartitionSet {
    fn eq(&self, other: &PartitionSet) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for PartitionSet {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn behaves_as_a_sorted_set_of_partition_ids() {
        let ids = [0u16, 1, 63, 64, 65, 127, 128, 270, 1000, 65535];
        let set: PartitionSet = ids.iter().copied().collect();
        assert_eq!(set.iter().collect::<Vec<_>>(), ids.to_vec());
        assert_eq!(set.len(), ids.len());
        assert!(ids.iter().all(|id| set.contains(*id)));
        assert!(!set.contains(2) && !set.contains(269) && !set.contains(65534));
        let other: PartitionSet = [1u16, 64, 200, 270].into_iter().collect();
        let expected: BTreeSet<u16> = [1, 64, 270].into();
        assert_eq!(set.intersection(&other).iter().collect::<BTreeSet<_>>(), expected);
        assert_eq!(other.intersection(&set), set.intersection(&other));
        let mut union = other.clone();
        union.union_with(&set);
        let all: BTreeSet<u16> = ids.iter().copied().chain([200]).collect();
        assert_eq!(union.iter().collect::<BTreeSet<_>>(), all);
        assert_eq!(PartitionSet::default(), [5u16].into_iter().collect::<PartitionSet>().intersection(&other));
    }
}
