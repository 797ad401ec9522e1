use super::*;

#[test]
fn pairs_count_what_the_causal_mask_keeps() {
    let brute = |s: &Shape| (0..s.s).map(|i| f64::from(s.keys_seen(i))).sum::<f64>();
    for shape in [
        Shape::new(1, 1, 7, 64),
        Shape::new(1, 1, 7, 64).with_causal(true),
        Shape::new(1, 1, 1, 64).with_kv(1, 33).with_causal(true),
        Shape::new(1, 1, 5, 64).with_kv(1, 33).with_causal(true),
        Shape::new(1, 1, 9, 64).with_kv(1, 4).with_causal(true),
        Shape::new(1, 1, 9, 64).with_kv(1, 4),
    ] {
        assert_eq!(shape.pairs(), brute(&shape), "{shape}");
    }
    // Decode under the mask: the one query sees every key.
    let decode = Shape::new(8, 32, 1, 128)
        .with_kv(8, 32_768)
        .with_causal(true);
    assert_eq!(decode.keys_seen(0), 32_768);
    assert_eq!(decode.flops(), 4.0 * 8.0 * 32.0 * 128.0 * 32_768.0);
    // Equal lengths: S(S+1)/2 pairs, the diagonal included.
    let square = Shape::new(1, 1, 4, 8).with_causal(true);
    assert_eq!(square.pairs(), 10.0);
}

#[test]
fn bytes_count_kv_heads_and_keys() {
    let s = Shape::new(2, 32, 16, 128).with_kv(8, 4096);
    assert_eq!(s.q_elements(), 2 * 32 * 16 * 128);
    assert_eq!(s.kv_elements(), 2 * 8 * 4096 * 128);
    assert_eq!(s.io_bytes(), 2.0 * (2.0 * 131_072.0 + 2.0 * 8_388_608.0));
    assert_eq!(s.kv_head_of(31), 7);
    assert_eq!(s.kv_head_of(4), 1);
}

#[test]
fn shapes_parse_with_kv_heads_and_keys() {
    assert_eq!("2,8,512,64".parse::<Shape>().unwrap(), Shape::MISSION);
    let s: Shape = "8, 32/8, 1/32768, 128".parse().unwrap();
    assert_eq!(s, Shape::new(8, 32, 1, 128).with_kv(8, 32_768));
    assert_eq!(s.to_string(), "B8 H32/8 S1/32768 D128");
    let full = s.with_dtype(Dtype::Bf16).with_causal(true);
    assert_eq!(full.to_string(), "B8 H32/8 S1/32768 D128 bf16 causal");
    assert!(
        "2,8/2/1,512,64"
            .parse::<Shape>()
            .unwrap_err()
            .contains("KV heads='2/1'")
    );
    assert!(
        "2/1,8,512,64"
            .parse::<Shape>()
            .unwrap_err()
            .contains("no slash")
    );
    assert!("2,8,512".parse::<Shape>().unwrap_err().contains("B,H,S,D"));
}

#[test]
fn validation_names_the_rule() {
    let err = |s: Shape| s.validate().unwrap_err();
    assert!(err(Shape::new(1, 32, 64, 64).with_kv(5, 64)).contains("must divide"));
    assert!(err(Shape::new(1, 8, 64, 64).with_kv(16, 64)).contains("must divide"));
    assert!(err(Shape::new(1, 8, 64, 64).with_kv(8, 32).with_causal(true)).contains("see no key"));
    assert!(Shape::new(1, 8, 64, 64).with_kv(8, 32).validate().is_ok());
    assert!(err(Shape::new(1, 8, 64, 64).with_kv(8, MAX_LEN + 1)).contains("key length"));
    for p in Shape::PRESETS {
        p.validate().unwrap();
    }
}

#[test]
fn sessions_write_the_plain_case_as_before() {
    let plain = serde_json::to_string(&Shape::MISSION).unwrap();
    assert_eq!(plain, r#"{"b":2,"h":8,"s":512,"d":64,"causal":false}"#);
    let back: Shape = serde_json::from_str(&plain).unwrap();
    assert_eq!(back, Shape::MISSION);
    let llm = Shape::PRESETS[6];
    let text = serde_json::to_string(&llm).unwrap();
    assert!(text.contains(r#""dtype":"bf16""#) && text.contains(r#""kv_len":32768"#));
    assert_eq!(serde_json::from_str::<Shape>(&text).unwrap(), llm);
    assert_eq!(llm.preset_name(), Some("Llama 3 8B decode"));
    assert_eq!(Shape::MISSION.preset_name(), None);
}

#[test]
fn dtypes_round_and_poison() {
    for dt in Dtype::ALL {
        assert_eq!(dt.to_f32(dt.from_f32(1.5)), 1.5);
        assert_eq!(dt.to_f32(dt.poison()), -dt.max());
        assert_eq!(dt.name().parse::<Dtype>().unwrap(), dt);
    }
    // bf16 keeps 8 significant bits: 1 + 2⁻⁸ rounds to 1 (ties to even).
    assert_eq!(
        Dtype::Bf16.to_f32(Dtype::Bf16.from_f32(1.0 + 1.0 / 256.0)),
        1.0
    );
    assert_eq!(
        Dtype::F16.to_f32(Dtype::F16.from_f32(1.0 + 1.0 / 256.0)),
        1.0 + 1.0 / 256.0
    );
    assert!("fp8".parse::<Dtype>().unwrap_err().contains("fp16, bf16"));
}

#[test]
fn compact_names_every_field_that_differs() {
    assert_eq!(Shape::MISSION.compact(), "b2h8s512d64");
    assert_eq!(Shape::MISSION.with_causal(true).compact(), "b2h8s512d64c");
    assert_eq!(Shape::PRESETS[6].compact(), "b8h32kv8s1sk32768d128bf16c");
}
