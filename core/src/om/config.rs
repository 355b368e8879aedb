//! Thresholds, overridable per record.

use crate::json_opts::Opts;
use crate::Result;

/// When observation, buffering, activation, blocking and reflection are due.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Config {
    /// Pending message tokens that make an observation due (30 000).
    pub observation_threshold: i64,
    /// Observation tokens that make a reflection due (40 000).
    pub reflection_threshold: i64,
    /// Buffer a chunk every this many new pending tokens (6 000).
    pub buffer_tokens: i64,
    /// Activate buffered chunks at this share of the observation threshold (0.8).
    pub buffer_activation: f64,
    /// Block the agent (observe synchronously) at this multiple of the threshold (1.2).
    pub block_after: f64,
    /// Raw observation lines kept beside a reflection ("sliding window", 50).
    pub keep_recent_lines: i64,
    /// Start a reflection in the background (buffer it) at this share of the reflection
    /// threshold (0.5), so it is ready when the threshold is reached.
    pub reflection_buffer_at: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            observation_threshold: 30_000,
            reflection_threshold: 40_000,
            buffer_tokens: 6_000,
            buffer_activation: 0.8,
            block_after: 1.2,
            keep_recent_lines: 50,
            reflection_buffer_at: 0.5,
        }
    }
}

pub(crate) const KEYS: &[&str] = &[
    "observation_threshold",
    "reflection_threshold",
    "buffer_tokens",
    "buffer_activation",
    "block_after",
    "keep_recent_lines",
    "reflection_buffer_at",
];

impl Config {
    /// The defaults overridden by a record's `config` JSON (or a call's options).
    pub(crate) fn with_overrides(mut self, o: &Opts) -> Result<Config> {
        self.observation_threshold = o.int(
            "observation_threshold",
            self.observation_threshold,
            1,
            i64::MAX / 4,
        )?;
        self.reflection_threshold = o.int(
            "reflection_threshold",
            self.reflection_threshold,
            1,
            i64::MAX / 4,
        )?;
        self.buffer_tokens = o.int("buffer_tokens", self.buffer_tokens, 1, i64::MAX / 4)?;
        self.keep_recent_lines = o.int("keep_recent_lines", self.keep_recent_lines, 0, 100_000)?;
        if let Some(v) = o.opt_f64("buffer_activation")? {
            if !(0.0..=1.0).contains(&v) {
                return Err(crate::Error::invalid(
                    "config.buffer_activation",
                    "must be between 0 and 1",
                ));
            }
            self.buffer_activation = v;
        }
        if let Some(v) = o.opt_f64("reflection_buffer_at")? {
            if !(0.0..=1.0).contains(&v) {
                return Err(crate::Error::invalid(
                    "config.reflection_buffer_at",
                    "must be between 0 and 1",
                ));
            }
            self.reflection_buffer_at = v;
        }
        if let Some(v) = o.opt_f64("block_after")? {
            if !(v.is_finite() && v >= 1.0) {
                return Err(crate::Error::invalid(
                    "config.block_after",
                    "must be at least 1",
                ));
            }
            self.block_after = v;
        }
        Ok(self)
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "observation_threshold": self.observation_threshold,
            "reflection_threshold": self.reflection_threshold,
            "buffer_tokens": self.buffer_tokens,
            "buffer_activation": self.buffer_activation,
            "block_after": self.block_after,
            "keep_recent_lines": self.keep_recent_lines,
            "reflection_buffer_at": self.reflection_buffer_at,
        })
    }
}
