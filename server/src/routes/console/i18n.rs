//! The console's words in Slovak and English. The language comes from `?lang=` (which also
//! sets a cookie), else the `invex_lang` cookie, else the browser's `Accept-Language`, else
//! Slovak: invex is built for Slovak businesses first.

use axum::http::{header, HeaderMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Sk,
    En,
}

pub const LANG_COOKIE: &str = "invex_lang";

impl Lang {
    pub fn code(self) -> &'static str {
        match self {
            Lang::Sk => "sk",
            Lang::En => "en",
        }
    }

    pub fn parse(s: &str) -> Option<Lang> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sk" => Some(Lang::Sk),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// The other language, for the switch.
    pub fn other(self) -> Lang {
        match self {
            Lang::Sk => Lang::En,
            Lang::En => Lang::Sk,
        }
    }

    /// From the query's `lang`, the cookie, or `Accept-Language` (first supported tag by
    /// quality), in that order.
    pub fn choose(query: Option<&str>, headers: &HeaderMap) -> Lang {
        if let Some(l) = query.and_then(Lang::parse) {
            return l;
        }
        if let Some(l) = super::guard::cookie(headers, LANG_COOKIE).and_then(|v| Lang::parse(&v)) {
            return l;
        }
        let accept = headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let mut best: Option<(f32, Lang)> = None;
        for part in accept.split(',').take(20) {
            let mut pieces = part.split(';');
            let tag = pieces.next().unwrap_or("").trim();
            let q = pieces
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            let primary = tag.split('-').next().unwrap_or("");
            if let Some(l) = Lang::parse(primary) {
                if best.is_none_or(|(bq, _)| q > bq) {
                    best = Some((q, l));
                }
            }
        }
        best.map_or(Lang::Sk, |(_, l)| l)
    }

    pub fn t(self) -> &'static Texts {
        match self {
            Lang::Sk => &SK,
            Lang::En => &EN,
        }
    }
}

/// Every text the console shows.
pub struct Texts {
    pub switch_to: &'static str,
    pub skip_to_content: &'static str,
    pub sandbox_banner: &'static str,
    pub sign_in: &'static str,
    pub sign_in_title: &'static str,
    pub email: &'static str,
    pub password: &'static str,
    pub new_password: &'static str,
    pub password_hint: &'static str,
    pub sign_in_refused: &'static str,
    pub too_many_attempts: &'static str,
    pub sign_out: &'static str,
    pub sign_out_everywhere: &'static str,
    pub signed_out_everywhere: &'static str,
    pub signed_in_as: &'static str,
    pub tenant: &'static str,
    pub role: &'static str,
    pub home_title: &'static str,
    pub people: &'static str,
    pub people_title: &'static str,
    pub invite: &'static str,
    pub invite_title: &'static str,
    pub invited: &'static str,
    pub invitation_link: &'static str,
    pub invitation_expires: &'static str,
    pub invitation_sent: &'static str,
    pub invitation_mailed: &'static str,
    pub mail_not_sent: &'static str,
    pub mail_pass_on: &'static str,
    pub no_password_yet: &'static str,
    pub signs_in_sso: &'static str,
    pub active: &'static str,
    pub disabled: &'static str,
    pub status: &'static str,
    pub link_title: &'static str,
    pub link_first_admin: &'static str,
    pub link_invitation: &'static str,
    pub link_gone: &'static str,
    pub set_password: &'static str,
    pub forbidden_title: &'static str,
    pub forbidden: &'static str,
    pub refused_title: &'static str,
    pub refused_cross_site: &'static str,
    pub refused_csrf: &'static str,
    pub error_title: &'static str,
    pub error_detail: &'static str,
    pub email_taken: &'static str,
    pub not_an_email: &'static str,
    pub not_a_role: &'static str,
    pub password_too_short: &'static str,
    pub password_too_long: &'static str,
    pub rules: &'static str,
    pub rules_title: &'static str,
    pub search: &'static str,
    pub search_text: &'static str,
    pub business_term: &'static str,
    pub owner: &'static str,
    pub severity: &'static str,
    pub pack: &'static str,
    pub any: &'static str,
    pub rules_found: &'static str,
    pub next_page: &'static str,
    pub message: &'static str,
    pub remediation: &'static str,
    pub context: &'static str,
    pub test: &'static str,
    pub versions: &'static str,
    pub run_by: &'static str,
    pub no_profile: &'static str,
    pub changed_since: &'static str,
    pub unchanged_since: &'static str,
    pub removed_in: &'static str,
    pub fixtures_pass: &'static str,
    pub fixtures_fail: &'static str,
    pub rule_not_found: &'static str,
    pub severity_names: [(&'static str, &'static str); 3],
    pub role_names: [(&'static str, &'static str); 4],
}

impl Texts {
    pub fn severity(&self, severity: &str) -> &'static str {
        self.severity_names
            .iter()
            .find(|(s, _)| *s == severity)
            .map_or("?", |(_, n)| n)
    }

    pub fn role(&self, role: &str) -> &'static str {
        self.role_names
            .iter()
            .find(|(r, _)| *r == role)
            .map_or("?", |(_, n)| n)
    }
}

pub static EN: Texts = Texts {
    switch_to: "Slovensky",
    skip_to_content: "Skip to content",
    sandbox_banner: "Sandbox: test data only, nothing here is a production result.",
    sign_in: "Sign in",
    sign_in_title: "Sign in to invex",
    email: "E-mail address",
    password: "Password",
    new_password: "New password",
    password_hint: "At least 12 characters.",
    sign_in_refused: "The address or the password is not right.",
    too_many_attempts: "Too many attempts. Wait a minute and try again.",
    sign_out: "Sign out",
    sign_out_everywhere: "Sign out everywhere",
    signed_out_everywhere: "Every session of yours has ended.",
    signed_in_as: "Signed in as",
    tenant: "Tenant",
    role: "Role",
    home_title: "invex console",
    people: "People",
    people_title: "People and roles",
    invite: "Invite",
    invite_title: "Invite a person",
    invited: "Invitation created. Send this link to the person; it is shown only now.",
    invitation_link: "Invitation link",
    invitation_expires: "Valid until",
    invitation_sent: "Invitation sent",
    invitation_mailed: "The invitation link was sent by e-mail to",
    mail_not_sent: "The invitation was created, but the e-mail to this address could not be sent:",
    mail_pass_on: "Send this link to the person yourself; it is shown only now.",
    no_password_yet: "invited, no password yet",
    signs_in_sso: "signs in through the identity provider",
    active: "active",
    disabled: "disabled",
    status: "Status",
    link_title: "Set your password",
    link_first_admin: "You are the first administrator. Choose the e-mail address you will sign in with and a password.",
    link_invitation: "Choose the password you will sign in with.",
    link_gone: "This link is unknown, has been used, or has expired. Ask an administrator for a new one.",
    set_password: "Set password and sign in",
    forbidden_title: "Not allowed",
    forbidden: "Your role does not allow this page.",
    refused_title: "Request refused",
    refused_cross_site: "The request did not come from this site.",
    refused_csrf: "The form has expired. Go back, reload the page and try again.",
    error_title: "Something went wrong",
    error_detail: "The request could not be completed. Try again; if it keeps failing, tell your administrator.",
    email_taken: "An account with this address exists already.",
    not_an_email: "This is not an e-mail address.",
    not_a_role: "Choose one of the roles.",
    password_too_short: "The password needs at least 12 characters.",
    password_too_long: "The password is too long.",
    rules: "Rules",
    rules_title: "Rule catalogue",
    search: "Search",
    search_text: "Rule id or words of its message",
    business_term: "Business term",
    owner: "Who fixes it",
    severity: "Severity",
    pack: "Rule pack",
    any: "any",
    rules_found: "rules found",
    next_page: "Next page",
    message: "Message",
    remediation: "How to fix it",
    context: "Checked on",
    test: "Test",
    versions: "Versions",
    run_by: "Run by",
    no_profile: "no installed profile",
    changed_since: "Changed since",
    unchanged_since: "Unchanged since",
    removed_in: "Removed in",
    fixtures_pass: "Documents it must accept",
    fixtures_fail: "Documents it must report",
    rule_not_found: "No installed rule pack carries this rule.",
    severity_names: [
        ("fatal", "fatal"),
        ("warning", "warning"),
        ("information", "information"),
    ],
    role_names: [
        ("admin", "Administrator"),
        ("accountant", "Accountant"),
        ("developer", "Developer"),
        ("auditor", "Auditor"),
    ],
};

pub static SK: Texts = Texts {
    switch_to: "English",
    skip_to_content: "Preskočiť na obsah",
    sandbox_banner: "Sandbox: iba testovacie údaje, nič tu nie je produkčný výsledok.",
    sign_in: "Prihlásiť sa",
    sign_in_title: "Prihlásenie do invex",
    email: "E-mailová adresa",
    password: "Heslo",
    new_password: "Nové heslo",
    password_hint: "Najmenej 12 znakov.",
    sign_in_refused: "Adresa alebo heslo nie je správne.",
    too_many_attempts: "Príliš veľa pokusov. Počkajte minútu a skúste znova.",
    sign_out: "Odhlásiť sa",
    sign_out_everywhere: "Odhlásiť sa všade",
    signed_out_everywhere: "Všetky vaše relácie sa skončili.",
    signed_in_as: "Prihlásený ako",
    tenant: "Nájomca",
    role: "Rola",
    home_title: "Konzola invex",
    people: "Ľudia",
    people_title: "Ľudia a roly",
    invite: "Pozvať",
    invite_title: "Pozvať osobu",
    invited: "Pozvánka je vytvorená. Pošlite tento odkaz pozvanej osobe; zobrazuje sa iba teraz.",
    invitation_link: "Odkaz pozvánky",
    invitation_expires: "Platí do",
    invitation_sent: "Pozvánka odoslaná",
    invitation_mailed: "Odkaz pozvánky sme poslali e-mailom na adresu",
    mail_not_sent: "Pozvánka je vytvorená, ale e-mail na túto adresu sa nepodarilo odoslať:",
    mail_pass_on: "Pošlite tento odkaz pozvanej osobe sami; zobrazuje sa iba teraz.",
    no_password_yet: "pozvaný, zatiaľ bez hesla",
    signs_in_sso: "prihlasuje sa cez poskytovateľa identity",
    active: "aktívny",
    disabled: "zablokovaný",
    status: "Stav",
    link_title: "Nastavte si heslo",
    link_first_admin: "Ste prvý administrátor. Zvoľte e-mailovú adresu, ktorou sa budete prihlasovať, a heslo.",
    link_invitation: "Zvoľte heslo, ktorým sa budete prihlasovať.",
    link_gone: "Tento odkaz je neznámy, už bol použitý alebo vypršal. Požiadajte administrátora o nový.",
    set_password: "Nastaviť heslo a prihlásiť sa",
    forbidden_title: "Nepovolené",
    forbidden: "Vaša rola túto stránku nepovoľuje.",
    refused_title: "Požiadavka odmietnutá",
    refused_cross_site: "Požiadavka neprišla z tejto stránky.",
    refused_csrf: "Formulár vypršal. Vráťte sa, obnovte stránku a skúste znova.",
    error_title: "Niečo sa pokazilo",
    error_detail: "Požiadavku sa nepodarilo dokončiť. Skúste znova; ak chyba pretrváva, povedzte to administrátorovi.",
    email_taken: "Účet s touto adresou už existuje.",
    not_an_email: "Toto nie je e-mailová adresa.",
    not_a_role: "Zvoľte jednu z rolí.",
    password_too_short: "Heslo musí mať najmenej 12 znakov.",
    password_too_long: "Heslo je príliš dlhé.",
    rules: "Pravidlá",
    rules_title: "Katalóg pravidiel",
    search: "Hľadať",
    search_text: "Id pravidla alebo slová z jeho správy",
    business_term: "Obchodný termín",
    owner: "Kto to opraví",
    severity: "Závažnosť",
    pack: "Balík pravidiel",
    any: "ľubovoľné",
    rules_found: "nájdených pravidiel",
    next_page: "Ďalšia strana",
    message: "Správa",
    remediation: "Ako to opraviť",
    context: "Kontroluje sa na",
    test: "Test",
    versions: "Verzie",
    run_by: "Spúšťa",
    no_profile: "žiadny nainštalovaný profil",
    changed_since: "Zmenené od",
    unchanged_since: "Nezmenené od",
    removed_in: "Odstránené vo",
    fixtures_pass: "Dokumenty, ktoré musí prijať",
    fixtures_fail: "Dokumenty, ktoré musí nahlásiť",
    rule_not_found: "Žiadny nainštalovaný balík toto pravidlo neobsahuje.",
    severity_names: [
        ("fatal", "závažná chyba"),
        ("warning", "varovanie"),
        ("information", "informácia"),
    ],
    role_names: [
        ("admin", "Administrátor"),
        ("accountant", "Účtovník"),
        ("developer", "Vývojár"),
        ("auditor", "Audítor"),
    ],
};

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_LANGUAGE, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn the_language_comes_from_query_cookie_then_browser() {
        assert_eq!(Lang::choose(None, &HeaderMap::new()), Lang::Sk);
        assert_eq!(Lang::choose(None, &accept("en-GB,en;q=0.9")), Lang::En);
        assert_eq!(
            Lang::choose(None, &accept("de-DE, en;q=0.5, sk;q=0.8")),
            Lang::Sk
        );
        assert_eq!(Lang::choose(Some("en"), &accept("sk")), Lang::En);
        let mut h = accept("sk");
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=b; invex_lang=en"),
        );
        assert_eq!(Lang::choose(None, &h), Lang::En);
        assert_eq!(Lang::choose(Some("xx"), &h), Lang::En);
    }

    #[test]
    fn both_languages_name_every_role() {
        for t in [&EN, &SK] {
            for r in crate::auth::ALL_ROLES {
                assert_ne!(t.role(r.as_str()), "?");
            }
        }
    }
}
