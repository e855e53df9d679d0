//! The labelled retrieval set of the hybrid search (shared by the test and
//! `benches/search.rs`): 40 logged struggles, as `studyloop study --end` writes
//! them (`<topic> — struggling: <concept> <note>`), each with a keyword query
//! (shares words with the line) and a paraphrase (shares none: checked by
//! `hybrid_finds_paraphrases_lexical_misses`, after lowercasing and a crude stem).

/// `(logged line, keyword query, paraphrased query)`.
pub const SET: &[(&str, &str, &str)] = &[
    (
        "SQL — struggling: window functions confused ROW_NUMBER with RANK when rows tie",
        "row_number rank tie",
        "sequential ids for records sharing a score: gaps or duplicates?",
    ),
    (
        "SQL — struggling: recursive CTE never terminates on cyclic graph data",
        "recursive cte",
        "query that calls itself loops forever over a network with loops",
    ),
    (
        "SQL — struggling: LEFT JOIN filters in WHERE silently become inner joins",
        "left join where",
        "outer merge drops unmatched records once I add a condition",
    ),
    (
        "SQL — struggling: NULL comparisons return unknown so equality checks fail",
        "null comparisons",
        "missing values never match anything, even each other",
    ),
    (
        "Rust — struggling: borrow checker rejects mutable reference while iterating vector",
        "borrow checker mutable",
        "compiler complains I change a list during a loop over it",
    ),
    (
        "Rust — struggling: lifetimes on structs holding string slices",
        "lifetimes structs",
        "annotating how long a reference inside a record lives",
    ),
    (
        "Rust — struggling: trait objects versus generics and dynamic dispatch cost",
        "trait objects generics",
        "boxed dyn interface or monomorphized type parameter, which is slower",
    ),
    (
        "Rust — struggling: async functions need an executor to actually run",
        "async executor",
        "my future never does anything unless something polls it",
    ),
    (
        "Python — struggling: mutable default arguments shared between calls",
        "mutable default arguments",
        "a list given as fallback parameter keeps old items across invocations",
    ),
    (
        "Python — struggling: generators are exhausted after one pass",
        "generators exhausted",
        "iterating a yield-based sequence a second time gives nothing",
    ),
    (
        "Python — struggling: decorators with parameters need three nested functions",
        "decorators parameters",
        "wrapping a callable with a configurable wrapper confuses me",
    ),
    (
        "Python — struggling: GIL prevents threads speeding up CPU-bound work",
        "gil threads",
        "parallel workers do not make number crunching faster in that interpreter",
    ),
    (
        "Git — struggling: rebase rewrites history and breaks shared branches",
        "rebase history",
        "replaying commits onto main messed up my teammates' copies",
    ),
    (
        "Git — struggling: resolving merge conflicts in lockfiles",
        "merge conflicts lockfiles",
        "two people changed the dependency pin file and combining fails",
    ),
    (
        "Git — struggling: detached HEAD after checking out a tag",
        "detached head",
        "I switched to a release label and now commits go nowhere",
    ),
    (
        "Statistics — struggling: p-values misread as probability the hypothesis is true",
        "p-values hypothesis",
        "significance number does not mean chance my theory holds",
    ),
    (
        "Statistics — struggling: confidence intervals interpretation",
        "confidence intervals",
        "what a ninety five percent range around an estimate really says",
    ),
    (
        "Statistics — struggling: Simpson's paradox when aggregating groups",
        "simpson paradox",
        "a trend reverses once you combine subpopulations",
    ),
    (
        "Statistics — struggling: overfitting a regression with too many predictors",
        "overfitting regression predictors",
        "model memorizes training examples because I added lots of variables",
    ),
    (
        "Linear algebra — struggling: eigenvectors and eigenvalues intuition",
        "eigenvectors eigenvalues",
        "directions a matrix only stretches, and by how much",
    ),
    (
        "Linear algebra — struggling: matrix multiplication is not commutative",
        "matrix multiplication commutative",
        "swapping the order of two products changes the result",
    ),
    (
        "Calculus — struggling: chain rule for composed functions",
        "chain rule",
        "differentiating a formula nested inside another one",
    ),
    (
        "Calculus — struggling: integration by parts choosing u and dv",
        "integration parts",
        "which factor to differentiate and which to antidifferentiate",
    ),
    (
        "Networking — struggling: TCP handshake and why SYN ACK is needed",
        "tcp handshake syn",
        "three step connection setup between client and server",
    ),
    (
        "Networking — struggling: DNS caching causes stale addresses after migration",
        "dns caching stale",
        "name lookups keep pointing at the old machine once we moved",
    ),
    (
        "Networking — struggling: subnet masks and CIDR notation",
        "subnet cidr",
        "slash twenty four after an IP and which hosts belong",
    ),
    (
        "Docker — struggling: container image layers bloat because of cache misses",
        "image layers cache",
        "every build reinstalls packages and the artifact keeps growing",
    ),
    (
        "Docker — struggling: volumes versus bind mounts for persistent data",
        "volumes bind mounts",
        "keeping database files when the box restarts",
    ),
    (
        "Kubernetes — struggling: pods restart in CrashLoopBackOff",
        "crashloopbackoff pods",
        "my deployment keeps dying and coming back over and over",
    ),
    (
        "JavaScript — struggling: closures capture loop variable with var",
        "closures var loop",
        "callbacks made in a for all print the last index",
    ),
    (
        "JavaScript — struggling: promises chaining and unhandled rejections",
        "promises rejections",
        "errors vanish inside then calls and nothing catches them",
    ),
    (
        "JavaScript — struggling: this binding changes inside callbacks",
        "this binding callbacks",
        "the receiver object is lost when passing a method around",
    ),
    (
        "Algorithms — struggling: dynamic programming state definition for knapsack",
        "dynamic programming knapsack",
        "choosing items under a weight limit with memoized subproblems",
    ),
    (
        "Algorithms — struggling: Dijkstra fails with negative edge weights",
        "dijkstra negative edge",
        "shortest path gives wrong answers once some costs are below zero",
    ),
    (
        "Algorithms — struggling: big O of nested loops versus logarithmic search",
        "big o nested loops",
        "how running time grows for a double for compared with halving",
    ),
    (
        "Operating systems — struggling: deadlock from lock ordering between threads",
        "deadlock lock ordering",
        "two workers each wait forever for a mutex the other holds",
    ),
    (
        "Operating systems — struggling: virtual memory paging and page faults",
        "virtual memory paging",
        "the kernel maps addresses to physical frames and misses trigger disk reads",
    ),
    (
        "Security — struggling: SQL injection through string concatenated queries",
        "sql injection concatenated",
        "attackers sneak commands in by gluing user input into a statement",
    ),
    (
        "Security — struggling: password hashing needs salt and slow algorithms",
        "password hashing salt",
        "storing login secrets safely with random extra bytes and bcrypt",
    ),
    (
        "Spanish — struggling: ser versus estar for temporary states",
        "ser estar temporary",
        "which verb meaning to be for describing a mood today in that language",
    ),
];
