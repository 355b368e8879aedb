//! What counts more in each phase of the agent's work, whose word counts more, and how a
//! phase's token budget is shared between memory types.

/// The phases of work, in the seed's order.
pub(crate) const PHASES: &[&str] = &[
    "define",
    "implement",
    "validate",
    "refine",
    "explore",
    "reflect",
];

/// The budget when no phase is given: the seed's smallest per-phase budget, so an unphased
/// recall never crowds a prompt more than a phased one would.
pub(crate) const DEFAULT_BUDGET: i64 = 2000;

/// The class of every type a phase's allocation does not name.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const OTHER: &str = "other";

/// How much a memory of type `ty` counts in `phase` (1 when the seed gives no weight).
pub(crate) fn weight(phase: Option<&str>, ty: &str) -> f64 {
    let table: &[(&str, f64)] = match phase {
        Some("define") => &[
            ("workflow_recipe", 1.4),
            ("dead_end", 1.2),
            ("requirement", 1.2),
            ("decision", 1.1),
            ("task_calibration", 1.1),
            ("gotcha", 0.8),
            ("error_pattern", 0.8),
        ],
        Some("implement") => &[
            ("gotcha", 1.4),
            ("error_pattern", 1.3),
            ("causal_dependency", 1.2),
            ("pattern", 1.1),
            ("dead_end", 1.2),
            ("prefetch_pattern", 1.1),
        ],
        Some("validate") => &[
            ("error_pattern", 1.4),
            ("e2e_observation", 1.4),
            ("requirement", 1.2),
            ("work_unit_outcome", 1.1),
        ],
        Some("refine") => &[
            ("error_pattern", 1.3),
            ("gotcha", 1.2),
            ("dead_end", 1.2),
            ("pattern", 1.0),
        ],
        Some("explore") => &[
            ("module_insight", 1.4),
            ("decision", 1.2),
            ("pattern", 1.1),
            ("causal_dependency", 1.0),
        ],
        Some("reflect") => &[
            ("work_unit_outcome", 1.4),
            ("task_calibration", 1.3),
            ("dead_end", 1.1),
        ],
        _ => &[],
    };
    table
        .iter()
        .find(|(t, _)| *t == ty)
        .map_or(1.0, |(_, w)| *w)
}

/// How much a memory's source is trusted: what the user taught most, what the observer
/// inferred least.
pub(crate) fn trust(source: &str) -> f64 {
    match source {
        "user_taught" => 1.4,
        "agent_explicit" => 1.2,
        "qa_auto" => 1.1,
        "observer_inferred" => 0.85,
        _ => 1.0,
    }
}

/// A phase's token budget and the share of it reserved for each class of memory.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Packing {
    pub budget: i64,
    pub allocation: &'static [(&'static str, f64)],
}

/// The seed's packing of `phase`; `None` without a phase (no shares: best first).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn packing(phase: Option<&str>) -> Option<Packing> {
    let (budget, allocation): (i64, &'static [(&'static str, f64)]) = match phase? {
        "define" => (
            2500,
            &[
                ("workflow_recipe", 0.30),
                ("requirement", 0.20),
                ("decision", 0.20),
                ("dead_end", 0.15),
                ("task_calibration", 0.10),
                (OTHER, 0.05),
            ],
        ),
        "implement" => (
            3000,
            &[
                ("gotcha", 0.30),
                ("error_pattern", 0.25),
                ("causal_dependency", 0.15),
                ("pattern", 0.15),
                ("dead_end", 0.10),
                (OTHER, 0.05),
            ],
        ),
        "validate" => (
            2500,
            &[
                ("error_pattern", 0.30),
                ("requirement", 0.25),
                ("e2e_observation", 0.25),
                ("work_unit_outcome", 0.15),
                (OTHER, 0.05),
            ],
        ),
        "refine" => (
            2000,
            &[
                ("error_pattern", 0.35),
                ("gotcha", 0.25),
                ("dead_end", 0.20),
                ("pattern", 0.15),
                (OTHER, 0.05),
            ],
        ),
        "explore" => (
            2000,
            &[
                ("module_insight", 0.40),
                ("decision", 0.25),
                ("pattern", 0.20),
                ("causal_dependency", 0.15),
            ],
        ),
        "reflect" => (
            1500,
            &[
                ("work_unit_outcome", 0.40),
                ("task_calibration", 0.35),
                ("dead_end", 0.15),
                (OTHER, 0.10),
            ],
        ),
        _ => return None,
    };
    Some(Packing { budget, allocation })
}
