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
}
