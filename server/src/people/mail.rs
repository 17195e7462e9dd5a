//! The invitation e-mail: who invited whom, as what, the one-time link and until when it
//! works, in Slovak and English (the inviting administrator's language first). Sending is
//! [`crate::mail`]'s.

use crate::mail::Outgoing;

/// The language the inviting administrator uses the console in: its text comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Slovak,
    English,
}

/// What the invitation says.
#[derive(Debug, Clone, Copy)]
pub struct InvitationMail<'a> {
    /// The invited person's address (normalised by [`super::email::normalise`]).
    pub to: &'a str,
    /// The absolute one-time link.
    pub link: &'a str,
    /// When the link stops working (RFC 3339, as stored).
    pub expires_at: &'a str,
    /// The inviting administrator's address.
    pub inviter: &'a str,
    /// The role's name in Slovak and in English.
    pub role_sk: &'a str,
    pub role_en: &'a str,
    pub first: Language,
}

/// The invitation as a message to send.
pub fn invitation(m: &InvitationMail<'_>) -> Outgoing {
    let expires = moment(m.expires_at);
    let sk = format!(
        "Dobrý deň,\n\n\
         {inviter} vás pozýva do konzoly invex s rolou {role}.\n\
         Heslo, ktorým sa budete prihlasovať, si nastavíte na tomto odkaze\n\
         (funguje raz a platí do {expires}):\n\n\
         {link}\n\n\
         Ak ste pozvánku nečakali, tento e-mail môžete ignorovať.\n",
        inviter = m.inviter,
        role = m.role_sk,
        link = m.link,
    );
    let en = format!(
        "Hello,\n\n\
         {inviter} invites you to the invex console as {role}.\n\
         Set the password you will sign in with at this link\n\
         (it works once and is valid until {expires}):\n\n\
         {link}\n\n\
         If you did not expect this invitation, you can ignore this e-mail.\n",
        inviter = m.inviter,
        role = m.role_en,
        link = m.link,
    );
    let (subject, text) = match m.first {
        Language::Slovak => (
            "Pozvánka do invex / Invitation to invex",
            format!("{sk}\n-- English --\n\n{en}"),
        ),
        Language::English => (
            "Invitation to invex / Pozvánka do invex",
            format!("{en}\n-- Slovensky --\n\n{sk}"),
        ),
    };
    Outgoing {
        to: m.to.to_string(),
        subject: subject.to_string(),
        text,
    }
}

/// `2027-01-15 08:00 UTC` from a stored moment (the stored text if it is not one).
fn moment(stored: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(stored)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%d %H:%M UTC")
                .to_string()
        })
        .unwrap_or_else(|_| stored.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(first: Language) -> Outgoing {
        invitation(&InvitationMail {
            to: "jana@firma.sk",
            link: "https://invex.firma.sk/console/links/TOKEN",
            expires_at: "2027-01-15T08:00:00.123456Z",
            inviter: "admin@firma.sk",
            role_sk: "Účtovník",
            role_en: "Accountant",
            first,
        })
    }

    #[test]
    fn both_languages_with_link_expiry_and_inviter() {
        for first in [Language::Slovak, Language::English] {
            let m = mail(first);
            assert_eq!(m.to, "jana@firma.sk");
            for part in [
                "admin@firma.sk vás pozýva do konzoly invex s rolou Účtovník.",
                "admin@firma.sk invites you to the invex console as Accountant.",
                "platí do 2027-01-15 08:00 UTC",
                "valid until 2027-01-15 08:00 UTC",
            ] {
                assert!(m.text.contains(part), "{part}: {}", m.text);
            }
            assert_eq!(
                m.text
                    .matches("\nhttps://invex.firma.sk/console/links/TOKEN\n")
                    .count(),
                2
            );
        }
        let sk = mail(Language::Slovak);
        assert!(sk.subject.starts_with("Pozvánka") && sk.text.starts_with("Dobrý deň"));
        let en = mail(Language::English);
        assert!(en.subject.starts_with("Invitation") && en.text.starts_with("Hello"));
    }
}
