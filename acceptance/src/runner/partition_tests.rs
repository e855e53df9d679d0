use super::*;

#[test]
fn xxh64_matches_the_published_vectors() {
    // The reference implementation's vectors (seed 0), covering the short path,
    // the 4-byte and 1-byte tails and the 32-byte stripe loop.
    assert_eq!(xxh64(b""), 0xEF46_DB37_51D8_E999);
    assert_eq!(xxh64(b"a"), 0xD24E_C4F1_A98C_6E5B);
    assert_eq!(xxh64(b"abc"), 0x44BC_2CF5_AD77_0999);
    assert_eq!(
        xxh64(b"Nobody inspects the spammish repetition"),
        0xFBCE_A83C_8A37_8BF1
    );
    // The 8-byte tail, and more than one 32-byte stripe: values from an independent
    // implementation that gives the four above (and the well-known quick-brown-fox one).
    assert_eq!(
        xxh64(b"The quick brown fox jumps over the lazy dog"),
        0x0B24_2D36_1FDA_71BC
    );
    assert_eq!(xxh64(b"0123456789abcdefXYZ"), 0xE4A7_3A17_0691_6BC9);
    assert_eq!(
        xxh64(
            b"The quick brown fox jumps over the lazy dog, twice: \
              the quick brown fox jumps over the lazy dog!"
        ),
        0xFAE5_8AD9_DC18_014A
    );
}

#[test]
fn nextests_own_partition_is_read_from_its_command_line_and_no_other() {
    let line = |w: &[&str]| w.join("\0").into_bytes();
    let nextest = line(&[
        "cargo-nextest",
        "nextest",
        "run",
        "--partition",
        "hash:2/3",
        "-E",
        "x",
    ]);
    assert_eq!(nextest_flag(&nextest).as_deref(), Some("hash:2/3"));
    // The same flag in another program's command line is not nextest's.
    let other = line(&["cargo", "test", "--partition", "hash:2/3"]);
    assert_eq!(nextest_flag(&other), None);
    assert_eq!(
        nextest_flag(&line(&["cargo-nextest", "nextest", "run"])),
        None
    );
    // A repeated flag is refused, so no partition is read from it.
    let twice = line(&[
        "cargo-nextest",
        "nextest",
        "run",
        "--partition=hash:1/2",
        "--partition=hash:2/2",
    ]);
    assert_eq!(nextest_flag(&twice), None);
}

#[test]
fn partitions_parse_like_nextest_and_bad_ones_name_the_accepted_form() {
    let p: Partition = "hash:2/3".parse().unwrap();
    assert_eq!((p.kind, p.shard, p.total), (PartitionKind::Hash, 2, 3));
    assert_eq!(p.to_string(), "hash:2/3");
    assert_eq!(
        "count:1/1".parse::<Partition>().unwrap().to_string(),
        "count:1/1"
    );
    assert_eq!(
        "time:3/3".parse::<Partition>().unwrap().to_string(),
        "time:3/3"
    );
    for bad in [
        "",
        "foo",
        "hash",
        "hash:",
        "hash:1",
        "hash:1/",
        "hash:0/2",
        "hash:3/2",
        "hash:m/2",
        "hash:1/n",
        "hash:1/2/3",
        "slice:1/2",
        "count:1/0",
        "hash:-1/2",
        // Issue 34: one shard, two spellings, would be two shards of one run.
        "hash:01/2",
        "hash:1/02",
        "hash:+1/2",
        "count:007/9",
        "time:0/3",
        "time:4/3",
        "time:1/03",
        "times:1/2",
    ] {
        let err = Partition::parse_from(bad, "--partition").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("hash:K/N, count:K/N or time:K/N") && text.contains(&format!("`{bad}`")),
            "{bad}: {text}"
        );
    }
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("cell-{i:03}::x")).collect()
}

#[test]
fn every_trial_lands_in_exactly_one_shard_for_every_kind() {
    let names = names(97);
    // Uneven weights, with ties, as recorded durations are.
    let weigh = |name: &str| 1 + (xxh64(name.as_bytes()) % 7) * 1_000;
    for total in 1..=7u64 {
        for kind in [
            PartitionKind::Hash,
            PartitionKind::Count,
            PartitionKind::Time,
        ] {
            // Every third trial is a skip, as under a partly selected matrix.
            let trials: Vec<(&str, bool)> = names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_str(), i % 3 != 0))
                .collect();
            let mut seen = BTreeSet::new();
            let mut sizes = Vec::new();
            for shard in 1..=total {
                let owned = Partition { kind, shard, total }.owned(&trials, &weigh);
                sizes.push(owned.len());
                for name in owned {
                    assert!(seen.insert(name), "{name} in two shards ({kind:?} {total})");
                }
            }
            assert_eq!(seen.len(), names.len(), "{kind:?} /{total}: {sizes:?}");
            if kind == PartitionKind::Count {
                let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(max - min <= 2, "count shards are balanced: {sizes:?}");
            }
        }
    }
}

/// Each shard's summed weight under `time:K/N`.
fn time_loads(trials: &[(&str, bool)], total: u64, weigh: &dyn Fn(&str) -> u64) -> Vec<u64> {
    (1..=total)
        .map(|shard| {
            let p = Partition {
                kind: PartitionKind::Time,
                shard,
                total,
            };
            p.owned(trials, weigh)
                .iter()
                .filter(|n| trials.iter().any(|(t, runs)| t == *n && *runs))
                .map(|n| weigh(n))
                .sum()
        })
        .collect()
}

#[test]
fn time_shards_are_balanced_by_recorded_duration_where_hash_and_count_are_not() {
    // Today's hermetic cells as recorded (ms, the 2026-12-02 fresh-clone run):
    // one long pole, a few medium trials, many short ones.
    let recorded: [(&str, u64); 12] = [
        ("cli-tmux::opencode", 36_337),
        ("mcp::opencode", 22_081),
        ("cli-tmux::opencode::paste", 20_536),
        ("web-acp-browser::opencode", 16_015),
        ("drill::opencode", 15_387),
        ("cli-tmux::grok", 14_507),
        ("cli-tmux::claude", 11_217),
        ("web-acp-browser::pi", 10_862),
        ("cli-tmux::pi", 10_686),
        ("web-acp::codex", 3_010),
        ("mcp::codex", 2_550),
        ("cli-tmux::codex::paste", 2_389),
    ];
    let mut trials: Vec<(&str, bool)> = recorded.iter().map(|(n, _)| (*n, true)).collect();
    trials.sort_unstable();
    let weigh = |name: &str| {
        recorded
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(1, |(_, ms)| *ms)
    };
    let total_ms: u64 = recorded.iter().map(|(_, ms)| ms).sum();
    for total in 2..=4u64 {
        let loads = time_loads(&trials, total, &weigh);
        let (max, min) = (*loads.iter().max().unwrap(), *loads.iter().min().unwrap());
        // Longest-processing-time dealing: the slowest shard is within the
        // largest trial of the lightest one, and never below the mean.
        assert!(max - min <= 36_337, "{total}: {loads:?}");
        assert!(max * total >= total_ms, "{total}: {loads:?}");
        let spread = |kind| {
            let sums: Vec<u64> = (1..=total)
                .map(|shard| {
                    Partition { kind, shard, total }
                        .owned(&trials, &weigh)
                        .iter()
                        .map(|n| weigh(n))
                        .sum()
                })
                .collect();
            *sums.iter().max().unwrap()
        };
        assert!(
            max <= spread(PartitionKind::Hash),
            "{total}: time {max} vs hash"
        );
        assert!(
            max <= spread(PartitionKind::Count),
            "{total}: time {max} vs count"
        );
    }
    // Three shards: 165.6 s of trials, so 55.2 s each is the ideal; dealt
    // longest first (36.3 → 1, 22.1 → 2, 20.5 → 3, 16.0 → 3, 15.4 → 2, …).
    assert_eq!(time_loads(&trials, 3, &weigh), vec![53_394, 53_729, 58_454]);
}

#[test]
fn time_dealing_is_deterministic_and_ignores_the_order_trials_arrive_in() {
    let names = names(40);
    let weigh = |name: &str| {
        if name.ends_with("7::x") {
            50_000
        } else {
            3_000
        }
    };
    let sorted: Vec<(&str, bool)> = names.iter().map(|n| (n.as_str(), true)).collect();
    let mut reversed = sorted.clone();
    reversed.reverse();
    for shard in 1..=3 {
        let p = Partition {
            kind: PartitionKind::Time,
            shard,
            total: 3,
        };
        assert_eq!(
            p.owned(&sorted, &weigh),
            p.owned(&reversed, &weigh),
            "shard {shard}"
        );
        assert_eq!(p.owned(&sorted, &weigh), p.owned(&sorted, &weigh));
    }
}

#[test]
fn the_flag_is_split_out_of_libtest_arguments_in_both_spellings() {
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let (flag, rest) = split_flag(&words(&[
        "bin",
        "--partition",
        "hash:1/2",
        "probe::",
        "--exact",
    ]))
    .unwrap();
    assert_eq!(flag.as_deref(), Some("hash:1/2"));
    assert_eq!(rest, words(&["bin", "probe::", "--exact"]));
    let (flag, _) = split_flag(&words(&["bin", "--partition=count:2/2"])).unwrap();
    assert_eq!(flag.as_deref(), Some("count:2/2"));
    assert_eq!(
        split_flag(&words(&["bin", "--partition"])).unwrap_err(),
        PartitionError::MissingValue
    );
}

#[test]
fn issue34_a_repeated_flag_is_refused_by_name_not_the_last_one_taken() {
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    for args in [
        &["bin", "--partition", "hash:1/2", "--partition", "hash:2/2"][..],
        &[
            "bin",
            "--partition=hash:1/2",
            "x",
            "--partition",
            "hash:2/2",
        ],
        &["bin", "--partition", "hash:1/2", "--partition=hash:1/2"],
    ] {
        let err = split_flag(&words(args)).unwrap_err();
        let PartitionError::Repeated { first, second } = &err else {
            panic!("{args:?}: {err:?}");
        };
        let text = err.to_string();
        assert!(
            text.contains(&format!("`{first}`"))
                && text.contains(&format!("`{second}`"))
                && text.contains("hash:K/N")
                && text.contains("give it once"),
            "{text}"
        );
    }
}

#[test]
fn issue34_a_shard_spelled_with_a_leading_zero_names_the_plain_spelling() {
    let text = Partition::parse_from("hash:01/2", "--partition")
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("`01`") && text.contains("write `1`"),
        "{text}"
    );
}

#[test]
fn flag_and_env_must_agree() {
    let env = CallerEnv::from_pairs([(ACC_PARTITION, " hash:1/2 ")]);
    let s = resolve(None, &env, false).unwrap().unwrap();
    assert_eq!(s.partition.to_string(), "hash:1/2");
    assert!(!s.by_nextest);
    assert_eq!(resolve(Some("hash:1/2"), &env, false).unwrap(), Some(s));
    let err = resolve(Some("hash:2/2"), &env, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`hash:2/2`") && err.contains("`hash:1/2`"),
        "{err}"
    );
    assert_eq!(resolve(None, &CallerEnv::default(), false).unwrap(), None);
    let bad = CallerEnv::from_pairs([(ACC_PARTITION, "hash:4/3")]);
    let err = resolve(None, &bad, false).unwrap_err().to_string();
    assert!(err.contains(ACC_PARTITION), "{err}");
}
