//! Standard Webhooks signatures: `v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`
//! where the key is the base64-decoded part of the secret after `whsec_`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const SECRET_PREFIX: &str = "whsec_";

#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    #[error("the webhook secret is not `whsec_` followed by base64")]
    MalformedSecret,
}

/// A new secret: `whsec_` and 32 random bytes in base64.
pub fn generate_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The signature of one attempt, `v1,<base64>`.
pub fn sign(
    secret: &str,
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, SigningError> {
    let encoded = secret
        .strip_prefix(SECRET_PREFIX)
        .ok_or(SigningError::MalformedSecret)?;
    let key = STANDARD
        .decode(encoded)
        .map_err(|_| SigningError::MalformedSecret)?;
    // HMAC takes keys of any length; the error exists only for other MACs.
    let mut mac =
        Hmac::<Sha256>::new_from_slice(&key).map_err(|_| SigningError::MalformedSecret)?;
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// The `webhook-signature` value: one signature per secret, space-separated (the current
/// secret first, then the previous one while a rotation's grace period runs).
pub fn header(
    secrets: &[&str],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, SigningError> {
    let signatures = secrets
        .iter()
        .map(|s| sign(s, msg_id, timestamp, body))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(signatures.join(" "))
}

/// Why a signed request was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("webhook-id, webhook-timestamp and webhook-signature headers are required")]
    MissingHeaders,
    #[error("webhook-timestamp is not within {0} s of now (replayed or clock skew)")]
    Stale(i64),
    #[error("no signature in webhook-signature matches the body")]
    Mismatch,
}

/// Check a Standard Webhooks signed request against `secret`: the timestamp within
/// `tolerance_secs` of `now` (so a captured request cannot be replayed later) and one of the
/// space-separated `v1,` signatures matching, compared in constant time.
pub fn verify(
    secret: &str,
    msg_id: Option<&str>,
    timestamp: Option<&str>,
    signatures: Option<&str>,
    body: &[u8],
    now: i64,
    tolerance_secs: i64,
) -> Result<(), VerifyError> {
    use subtle::ConstantTimeEq;
    let (Some(id), Some(ts), Some(sigs)) = (msg_id, timestamp, signatures) else {
        return Err(VerifyError::MissingHeaders);
    };
    let ts: i64 = ts.trim().parse().map_err(|_| VerifyError::MissingHeaders)?;
    if (now - ts).abs() > tolerance_secs {
        return Err(VerifyError::Stale(tolerance_secs));
    }
    let expected = sign(secret, id, ts, body).map_err(|_| VerifyError::Mismatch)?;
    let matched = sigs
        .split_whitespace()
        .any(|s| bool::from(s.as_bytes().ct_eq(expected.as_bytes())));
    if matched {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_webhooks_example_signs_as_published() {
        let sig = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        )
        .expect("sign");
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn secrets_are_prefixed_random_32_bytes_and_rotation_signs_twice() {
        let a = generate_secret();
        let b = generate_secret();
        assert_ne!(a, b);
        let raw = STANDARD.decode(&a[SECRET_PREFIX.len()..]).expect("base64");
        assert_eq!(raw.len(), 32);
        let h = header(&[&a, &b], "msg_1", 1, b"{}").expect("header");
        let parts: Vec<&str> = h.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], sign(&a, "msg_1", 1, b"{}").expect("a"));
        assert!(sign("nope", "m", 1, b"").is_err());
    }

    #[test]
    fn verification_takes_any_listed_signature_and_refuses_old_or_forged_ones() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let good = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        let id = Some("msg_p5jXN8AQM9LWM0D4loKWxJek");
        let ts = Some("1614265330");
        let two = format!("v1,AAAA {good}");
        assert_eq!(
            verify(secret, id, ts, Some(&two), body, 1614265330, 300),
            Ok(())
        );
        assert_eq!(
            verify(secret, id, ts, Some(good), b"{}", 1614265330, 300),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify(secret, id, ts, Some(good), body, 1614265330 + 301, 300),
            Err(VerifyError::Stale(300))
        );
        assert_eq!(
            verify(secret, None, ts, Some(good), body, 1614265330, 300),
            Err(VerifyError::MissingHeaders)
        );
    }
}
