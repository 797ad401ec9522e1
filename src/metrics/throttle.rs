//! NVML clock-event ("throttle") reasons: the bitmask decoded to names, and
//! which of them actually slow a kernel.

/// (bit, name) as in nvml.h's `nvmlClocksEventReason*` / `nvmlClocksThrottleReason*`.
pub const REASONS: [(u64, &str); 9] = [
    (0x1, "idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
];

/// Names of the set bits; unknown bits come out as `unknown_0x…`.
pub fn decode(bits: u64) -> Vec<String> {
    let mut out: Vec<String> = REASONS
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| n.to_string())
        .collect();
    let known: u64 = REASONS.iter().map(|(b, _)| b).sum();
    let unknown = bits & !known;
    if unknown != 0 {
        out.push(format!("unknown_{unknown:#x}"));
    }
    out
}

/// Whether a set of reasons means the clocks were held down under load
/// (idle, application-clock and display settings do not).
pub fn is_throttling(reasons: &[String]) -> bool {
    reasons.iter().any(|r| {
        !matches!(
            r.as_str(),
            "idle" | "applications_clocks_setting" | "display_clock_setting"
        )
    })
}

/// A batch ran below the expected clock when its measured SM clock is under
/// 75% of the expected one.
pub fn below_expected(measured_mhz: u32, expected_mhz: u32) -> bool {
    expected_mhz > 0 && (measured_mhz as f64) < 0.75 * expected_mhz as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_bits() {
        assert!(decode(0).is_empty());
        assert_eq!(decode(0x1), ["idle"]);
        assert_eq!(decode(0x4 | 0x40), ["sw_power_cap", "hw_thermal_slowdown"]);
        assert_eq!(decode(0x1000 | 0x10), ["sync_boost", "unknown_0x1000"]);
    }

    #[test]
    fn throttling_means_held_down() {
        assert!(!is_throttling(&decode(0x1)));
        assert!(!is_throttling(&decode(0x2 | 0x100)));
        assert!(is_throttling(&decode(0x4)));
        assert!(is_throttling(&decode(0x10)));
    }

    #[test]
    fn clock_threshold() {
        assert!(below_expected(1484, 1980));
        assert!(!below_expected(1485, 1980));
        assert!(!below_expected(100, 0));
    }
}
