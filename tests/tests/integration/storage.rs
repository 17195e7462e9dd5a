//! The storage suite, run on SQLite always and on PostgreSQL when
//! `INVEX_TEST_POSTGRES_URL` names a server (`.ci/run` sets it when 127.0.0.1:5432 answers).

use crate::support::{JsonBody, TestServer, BOOTSTRAP};
use invex_server::clock::now;
use invex_server::ids::new_id;
use invex_server::store::{
    ConversionRecord, IdempotencyClaim, InvoiceRecord, KeyCompletion, KeyRecord, LinkRecord,
    NewInvoice, PersonChange, PersonRecord, RevokeOutcome, Store, StoreError, UsageDelta,
    ValidationRecord, OPERATOR_TENANT_ID,
};
use reqwest::Method;
use serde_json::Value;

fn key(tenant: &str, role: &str, prefix: &str) -> KeyRecord {
    KeyRecord {
        id: new_id("key"),
        tenant_id: tenant.to_string(),
        name: format!("{role} key"),
        role: role.to_string(),
        prefix: prefix.to_string(),
        hash: format!("{:0>64}", prefix.len()),
        created_at: now(),
        revoked_at: None,
    }
}

fn validation(tenant: &str, n: usize) -> ValidationRecord {
    ValidationRecord {
        id: new_id("val"),
        tenant_id: tenant.to_string(),
        key_id: None,
        created_at: now(),
        file_name: Some(format!("{n}.xml")),
        sha256: format!("{n:0>64}"),
        size_bytes: 1000 + n as i64,
        profile: "peppol-bis3-sk@2027.1".into(),
        verdict: if n.is_multiple_of(2) {
            "valid"
        } else {
            "invalid"
        }
        .into(),
        rules_version: "en16931-ubl@1.3.16,peppol-bis3@2026.5".into(),
        environment: "sandbox".into(),
        result: format!("{{\"n\":{n},\"text\":\"žluťoučký kůň\"}}"),
    }
}

async fn suite(store: &Store) {
    // Bootstrap happens once, whoever asks.
    let boot = key(OPERATOR_TENANT_ID, "admin", "h_boot");
    assert!(store.bootstrap(&boot).await.unwrap());
    people(store).await;
    assert!(!store
        .bootstrap(&key(OPERATOR_TENANT_ID, "admin", "h_boot2"))
        .await
        .unwrap());
    let tenants = store.tenants(None, 100).await.unwrap();
    assert_eq!(tenants.len(), 1);
    assert_eq!(tenants[0].id, OPERATOR_TENANT_ID);

    // Tenants and keys.
    let acme = store.create_tenant("Acme").await.unwrap();
    assert_eq!(store.tenant(&acme.id).await.unwrap().unwrap().name, "Acme");
    let k = key(&acme.id, "developer", "inx_aaaaaaaaaaaa");
    store.insert_key(&k).await.unwrap();
    assert!(
        store
            .insert_key(&key(&acme.id, "admin", "inx_aaaaaaaaaaaa"))
            .await
            .is_err(),
        "prefixes are unique"
    );
    assert_eq!(
        store
            .key_by_prefix("inx_aaaaaaaaaaaa")
            .await
            .unwrap()
            .unwrap(),
        k
    );
    assert!(store
        .key_by_prefix("inx_bbbbbbbbbbbb")
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        store.keys(&acme.id, None, 100).await.unwrap(),
        vec![k.clone()]
    );
    assert_eq!(
        store.keys(OPERATOR_TENANT_ID, None, 100).await.unwrap(),
        vec![boot.clone()]
    );
    // Pages: newest first, each older than the last id of the page before.
    let more: Vec<KeyRecord> = (0..3)
        .map(|i| key(&acme.id, "auditor", &format!("inx_page{i}aaaaaaa")))
        .collect();
    for k in &more {
        store.insert_key(k).await.unwrap();
    }
    let first = store.keys(&acme.id, None, 2).await.unwrap();
    assert_eq!(first, vec![more[2].clone(), more[1].clone()]);
    let rest = store.keys(&acme.id, Some(&first[1].id), 2).await.unwrap();
    assert_eq!(rest, vec![more[0].clone(), k.clone()]);
    assert!(store
        .keys(&acme.id, Some(&k.id), 2)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        store
            .active_keys_with_role(OPERATOR_TENANT_ID, "admin")
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store.revoke_key(OPERATOR_TENANT_ID, &k.id).await.unwrap(),
        RevokeOutcome::NotFound
    );
    assert_eq!(
        store.revoke_key(&acme.id, &k.id).await.unwrap(),
        RevokeOutcome::Now
    );
    assert_eq!(
        store.revoke_key(&acme.id, &k.id).await.unwrap(),
        RevokeOutcome::Already
    );
    assert!(store
        .key_by_prefix(&k.prefix)
        .await
        .unwrap()
        .unwrap()
        .revoked_at
        .is_some());

    // Validations: many concurrent writers share commits; each waits for its own.
    let mut handles = Vec::new();
    for n in 0..40 {
        let store = store.clone();
        let tenant = if n % 4 == 0 {
            acme.id.clone()
        } else {
            OPERATOR_TENANT_ID.to_string()
        };
        handles.push(tokio::spawn(async move {
            let v = validation(&tenant, n);
            store.insert_validations(vec![v.clone()]).await.unwrap();
            v
        }));
    }
    let mut written = Vec::new();
    for h in handles {
        written.push(h.await.unwrap());
    }
    for v in &written {
        assert_eq!(
            store
                .validation(&v.tenant_id, &v.id)
                .await
                .unwrap()
                .as_ref(),
            Some(v)
        );
        let other = if v.tenant_id == acme.id {
            OPERATOR_TENANT_ID
        } else {
            acme.id.as_str()
        };
        assert!(store.validation(other, &v.id).await.unwrap().is_none());
    }
    // Pages, newest first, scoped to the tenant.
    let page1 = store
        .validations(OPERATOR_TENANT_ID, None, 20)
        .await
        .unwrap();
    assert_eq!(page1.len(), 20);
    let page2 = store
        .validations(OPERATOR_TENANT_ID, Some(&page1[19].id), 20)
        .await
        .unwrap();
    assert_eq!(page2.len(), 10);
    let mut ids: Vec<&str> = page1.iter().chain(&page2).map(|v| v.id.as_str()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]));
    ids.sort();
    let mut expected: Vec<&str> = written
        .iter()
        .filter(|v| v.tenant_id == OPERATOR_TENANT_ID)
        .map(|v| v.id.as_str())
        .collect();
    expected.sort();
    assert_eq!(ids, expected);
    assert_eq!(
        store.validations(&acme.id, None, 100).await.unwrap().len(),
        10
    );
    // Usage counters add up, per tenant, month and meter.
    let delta = |tenant: &str, period: &str, calls: i64| UsageDelta {
        tenant_id: tenant.to_string(),
        period: period.to_string(),
        meter: "vat_verify".to_string(),
        calls,
    };
    store
        .add_usage(&[
            delta(&acme.id, "2026-11", 5),
            delta(OPERATOR_TENANT_ID, "2026-11", 1),
        ])
        .await
        .unwrap();
    store
        .add_usage(&[delta(&acme.id, "2026-11", 7), delta(&acme.id, "2026-12", 2)])
        .await
        .unwrap();
    assert_eq!(
        store
            .usage_calls(&acme.id, "2026-11", "vat_verify")
            .await
            .unwrap(),
        12
    );
    assert_eq!(
        store
            .usage_calls(&acme.id, "2026-12", "vat_verify")
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        store
            .usage_calls(&acme.id, "2026-10", "vat_verify")
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        store
            .usage_calls(OPERATOR_TENANT_ID, "2026-11", "vat_verify")
            .await
            .unwrap(),
        1
    );
    idempotency(store, OPERATOR_TENANT_ID).await;
    conversion_pages(store, &acme.id).await;
    conversion_inputs(store, &acme.id).await;
    store.ping().await.unwrap();
}

/// Console accounts through the accounts service: invitations, one-time links used at most
/// once (also when two arrive together), sessions and their revocation.
async fn people(store: &Store) {
    use invex_server::people::{Accounts, AccountsError, SessionPolicy, SignIn};
    let accounts = Accounts::new(store.clone(), SessionPolicy::default());
    let first = accounts
        .first_admin(OPERATOR_TENANT_ID)
        .await
        .unwrap()
        .expect("a tenant without people gets a first admin");
    assert!(accounts
        .first_admin(OPERATOR_TENANT_ID)
        .await
        .unwrap()
        .is_none());
    // Two uses of one link at the same moment: one wins.
    let (a, b) = tokio::join!(
        accounts.complete_link(
            &first.token,
            Some("Boss@Firma.sk"),
            "first admin's password"
        ),
        accounts.complete_link(&first.token, Some("boss2@firma.sk"), "another password!!"),
    );
    assert!(a.is_ok() != b.is_ok(), "{a:?} {b:?}");
    let winner = if a.is_ok() {
        "boss@firma.sk"
    } else {
        "boss2@firma.sk"
    };
    let person = store
        .person_by_email(winner)
        .await
        .unwrap()
        .expect("address set");
    assert_eq!(person.role, "admin");
    assert!(person
        .password_hash
        .as_deref()
        .unwrap()
        .starts_with("$argon2id$"));

    let inv = accounts
        .invite(OPERATOR_TENANT_ID, "Jana@Firma.sk", "auditor")
        .await
        .unwrap();
    assert_eq!(inv.person.email, "jana@firma.sk");
    assert!(matches!(
        accounts
            .invite(OPERATOR_TENANT_ID, "jana@firma.sk", "admin")
            .await,
        Err(AccountsError::EmailTaken(_))
    ));
    assert!(matches!(
        accounts
            .invite(OPERATOR_TENANT_ID, "x@firma.sk", "boss")
            .await,
        Err(AccountsError::Role(_))
    ));
    // An invitation does not let the address be changed.
    let jana = accounts
        .complete_link(&inv.token, Some("evil@firma.sk"), "janino dlhé heslo")
        .await
        .unwrap();
    assert_eq!(jana.person.email, "jana@firma.sk");
    assert!(accounts.session(&jana.token).await.unwrap().is_some());
    let again = match accounts
        .sign_in(None, "jana@firma.sk", "janino dlhé heslo")
        .await
    {
        Ok(SignIn::Ok(s)) => s,
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        accounts
            .sign_in(None, "jana@firma.sk", "wrong password")
            .await,
        Ok(SignIn::Refused)
    ));
    accounts.sign_out(&jana.token).await.unwrap();
    assert!(accounts.session(&jana.token).await.unwrap().is_none());
    assert!(accounts.session(&again.token).await.unwrap().is_some());
    assert_eq!(
        accounts.sign_out_everywhere(&jana.person.id).await.unwrap(),
        1
    );
    assert!(accounts.session(&again.token).await.unwrap().is_none());
    let people = store.people(OPERATOR_TENANT_ID).await.unwrap();
    assert_eq!(people.len(), 2);
    administration(store, &accounts, &person, &jana.person).await;
}

/// Administering people: roles, disabling (sessions end in the same transaction) and
/// enabling, the tenant's last administrator kept by the store, other tenants not found.
async fn administration(
    store: &Store,
    accounts: &invex_server::people::Accounts,
    boss: &PersonRecord,
    jana: &PersonRecord,
) {
    use invex_server::people::{AccountsError, SignIn};
    let t = OPERATOR_TENANT_ID;
    let changed = |c: PersonChange| match c {
        PersonChange::Changed(p) => p,
        other => panic!("{other:?}"),
    };
    assert_eq!(store.active_admins(t).await.unwrap(), 1);
    // The only administrator who can sign in is neither demoted nor disabled (the store
    // refuses whoever asks).
    assert_eq!(
        store.set_person_role(t, &boss.id, "auditor").await.unwrap(),
        PersonChange::LastAdmin
    );
    assert_eq!(
        store.disable_person(t, &boss.id, &now()).await.unwrap(),
        PersonChange::LastAdmin
    );
    assert_eq!(
        store.person(&boss.id).await.unwrap().as_ref(),
        Some(boss),
        "nothing changed"
    );
    // Another tenant finds nobody of this one. (An id only: the suite counts tenants.)
    let other = new_id("ten");
    assert_eq!(
        store.person_in_tenant(&other, &jana.id).await.unwrap(),
        None
    );
    assert_eq!(
        store
            .person_in_tenant(t, &jana.id)
            .await
            .unwrap()
            .map(|p| p.email),
        Some("jana@firma.sk".to_string())
    );
    for change in [
        store.set_person_role(&other, &jana.id, "admin").await,
        store.disable_person(&other, &jana.id, &now()).await,
        store.enable_person(&other, &jana.id).await,
    ] {
        assert_eq!(change.unwrap(), PersonChange::NotFound);
    }
    assert_eq!(
        store
            .set_person_role(t, "per_nobody", "admin")
            .await
            .unwrap(),
        PersonChange::NotFound
    );

    // Jana an administrator too: now either of them may go, but not both.
    assert_eq!(
        changed(store.set_person_role(t, &jana.id, "admin").await.unwrap()).role,
        "admin"
    );
    assert_eq!(store.active_admins(t).await.unwrap(), 2);
    let session = match accounts
        .sign_in(None, "jana@firma.sk", "janino dlhé heslo")
        .await
    {
        Ok(SignIn::Ok(s)) => s,
        other => panic!("{other:?}"),
    };
    let disabled = changed(store.disable_person(t, &jana.id, &now()).await.unwrap());
    let at = disabled.disabled_at.clone().expect("disabled");
    // Her session ended with it; signing in is refused as for a wrong password.
    let ended = store
        .session(&session_hash(&session.token))
        .await
        .unwrap()
        .expect("kept");
    assert_eq!(ended.revoked_at.as_deref(), Some(at.as_str()));
    assert!(accounts.session(&session.token).await.unwrap().is_none());
    assert!(matches!(
        accounts
            .sign_in(None, "jana@firma.sk", "janino dlhé heslo")
            .await,
        Ok(SignIn::Refused)
    ));
    // A disabled administrator does not count: the boss is the last one again.
    assert_eq!(store.active_admins(t).await.unwrap(), 1);
    assert_eq!(
        store.disable_person(t, &boss.id, &now()).await.unwrap(),
        PersonChange::LastAdmin
    );
    // Disabling twice keeps the first moment.
    assert_eq!(
        changed(store.disable_person(t, &jana.id, &now()).await.unwrap()).disabled_at,
        Some(at)
    );
    assert!(changed(store.enable_person(t, &jana.id).await.unwrap())
        .disabled_at
        .is_none());
    assert_eq!(store.active_admins(t).await.unwrap(), 2);

    // Through the accounts service: own account, tenants, who may ask.
    let boss = store.person(&boss.id).await.unwrap().unwrap();
    assert!(matches!(
        accounts.disable(&boss, &boss.id).await,
        Err(AccountsError::OwnAccount)
    ));
    assert!(matches!(
        accounts.change_role(&boss, &boss.id, "developer").await,
        Err(AccountsError::OwnAccount)
    ));
    assert!(matches!(
        accounts.change_role(&boss, &jana.id, "boss").await,
        Err(AccountsError::Role(_))
    ));
    let mut stranger = boss.clone();
    stranger.tenant_id = other.clone();
    assert!(matches!(
        accounts.disable(&stranger, &jana.id).await,
        Err(AccountsError::NotFound)
    ));
    let jana = accounts
        .change_role(&boss, &jana.id, "developer")
        .await
        .unwrap();
    assert_eq!(jana.role, "developer");
    assert!(matches!(
        accounts.disable(&jana, &boss.id).await,
        Err(AccountsError::NotAdmin)
    ));
    let jana = accounts.disable(&boss, &jana.id).await.unwrap();
    assert!(jana.disabled_at.is_some());
    let jana = accounts.enable(&boss, &jana.id).await.unwrap();
    assert!(jana.disabled_at.is_none());
    assert!(matches!(
        accounts
            .sign_in(None, "jana@firma.sk", "janino dlhé heslo")
            .await,
        Ok(SignIn::Ok(_))
    ));
}

/// The stored hash of a session's cookie token.
fn session_hash(token: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
}

fn conversion(tenant: &str, batch: &str, position: i64, status: &str) -> ConversionRecord {
    ConversionRecord {
        id: new_id("conv"),
        tenant_id: tenant.to_string(),
        batch_id: batch.to_string(),
        position,
        status: status.to_string(),
        file_name: Some("in.csv".into()),
        input_format: "csv".into(),
        input_sha256: "0".repeat(64),
        document_id: Some(format!("FV-{position}")),
        draft: "{}".into(),
        xml: "<Invoice/>".into(),
        xml_sha256: "1".repeat(64),
        report: "{}".into(),
        confidence: 0.9,
        reasons: "[]".into(),
        cross_checks: "[]".into(),
        changes: "[]".into(),
        needed_review: status == "needs_review",
        approved_by: None,
        approved_at: None,
        review_note: None,
        invoice_id: None,
        environment: "sandbox".into(),
        created_at: now(),
        updated_at: now(),
        issue_date: Some("2027-01-15".into()),
        seller_ids: String::new(),
    }
}

/// The file a conversion was read from comes back byte for byte (any byte, base64 inside),
/// once per tenant and content, and only to its tenant.
async fn conversion_inputs(store: &Store, tenant: &str) {
    let content: Vec<u8> = (0..=255u8)
        .chain(b"Invoice;IBAN\r\n".iter().copied())
        .collect();
    let sha256 = "9".repeat(64);
    let input = invex_server::store::InputRecord {
        tenant_id: tenant.to_string(),
        sha256: sha256.clone(),
        file_name: Some("faktúry.csv".into()),
        format: "csv".into(),
        content: content.clone(),
        created_at: now(),
    };
    let first = conversion(tenant, "batch_inputs", 0, "needs_review");
    store
        .insert_conversions(std::slice::from_ref(&first), std::slice::from_ref(&input))
        .await
        .unwrap();
    // The same file again, with another conversion: stored once, the conversion added.
    let again = conversion(tenant, "batch_inputs2", 0, "ready");
    store
        .insert_conversions(std::slice::from_ref(&again), std::slice::from_ref(&input))
        .await
        .unwrap();
    assert_eq!(
        store.conversion_input(tenant, &sha256).await.unwrap(),
        Some(input)
    );
    assert!(store.conversion(tenant, &again.id).await.unwrap().is_some());
    assert_eq!(
        store
            .conversion_input("someone-else", &sha256)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .conversion_input(tenant, &"8".repeat(64))
            .await
            .unwrap(),
        None
    );
}

/// Conversions page newest first, filtered by status, batch or both (each a condition of
/// its own, numbered as given).
async fn conversion_pages(store: &Store, tenant: &str) {
    let statuses = ["ready", "needs_review", "ready", "needs_review", "ready"];
    let mut made = Vec::new();
    for (batch, positions) in [("batch_a", 0..3), ("batch_b", 3..5)] {
        let records: Vec<ConversionRecord> = positions
            .map(|p| conversion(tenant, batch, p, statuses[p as usize]))
            .collect();
        store.insert_conversions(&records, &[]).await.unwrap();
        made.extend(records);
    }
    let ids = |rows: Vec<ConversionRecord>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let newest_first = |pick: &dyn Fn(&ConversionRecord) -> bool| {
        let mut v: Vec<String> = made
            .iter()
            .filter(|c| pick(c))
            .map(|c| c.id.clone())
            .collect();
        v.reverse();
        v
    };
    let all = ids(store
        .conversions(tenant, None, None, None, 10)
        .await
        .unwrap());
    assert_eq!(all, newest_first(&|_| true));
    let page = ids(store
        .conversions(tenant, None, None, None, 2)
        .await
        .unwrap());
    let rest = ids(store
        .conversions(tenant, None, None, Some(&page[1]), 10)
        .await
        .unwrap());
    assert_eq!([page, rest].concat(), all);
    let review = ids(store
        .conversions(tenant, Some("needs_review"), None, None, 10)
        .await
        .unwrap());
    assert_eq!(review, newest_first(&|c| c.status == "needs_review"));
    let batch = ids(store
        .conversions(tenant, None, Some("batch_a"), None, 10)
        .await
        .unwrap());
    assert_eq!(batch, newest_first(&|c| c.batch_id == "batch_a"));
    let both = ids(store
        .conversions(tenant, Some("ready"), Some("batch_b"), None, 10)
        .await
        .unwrap());
    assert_eq!(
        both,
        newest_first(&|c| c.batch_id == "batch_b" && c.status == "ready")
    );
    assert!(store
        .conversions("ten_nobody", None, None, None, 10)
        .await
        .unwrap()
        .is_empty());
}

fn invoice(tenant: &str) -> InvoiceRecord {
    InvoiceRecord {
        id: new_id("inv"),
        tenant_id: tenant.to_string(),
        connection_id: None,
        status: "queued".into(),
        document_id: Some("INV-1".into()),
        buyer_endpoint: None,
        sha256: "0".repeat(64),
        payload: "<Invoice/>".into(),
        validation_id: new_id("val"),
        profile: "peppol-bis3-sk@2027.1".into(),
        rules_version: "x".into(),
        summary: "{}".into(),
        findings: "[]".into(),
        scenario: None,
        transmission_id: None,
        resubmission_of: None,
        environment: "sandbox".into(),
        created_at: now(),
        updated_at: now(),
        issue_date: Some("2027-01-15".into()),
        seller_ids: "SK2022749619".into(),
    }
}

fn stored<'a>(inv: &'a InvoiceRecord, key: &'a str, token: &'a str) -> NewInvoice<'a> {
    NewInvoice {
        invoice: inv,
        events: &[],
        queue_at: Some("2026-01-01T00:00:00Z"),
        notices: &[],
        conversion_id: None,
        completion: KeyCompletion {
            key,
            token,
            status: 202,
            content_type: "application/json",
            body: "{\"first\":true}",
        },
    }
}

/// An idempotency key is completed only by the request holding it, in the transaction
/// that stores its invoice: a request whose key was taken over stores nothing.
async fn idempotency(store: &Store, tenant: &str) {
    let (long_ago, later) = ("2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z");
    let at = now();
    let claim = |token: &'static str, stale_before: &'static str| {
        store.claim_idempotency_key(tenant, "k", "hash", token, &at, later, stale_before)
    };
    assert_eq!(
        claim("t1", long_ago).await.unwrap(),
        IdempotencyClaim::New { token: "t1".into() }
    );
    assert_eq!(
        claim("t2", long_ago).await.unwrap(),
        IdempotencyClaim::Running
    );
    // The first holder is presumed dead: the key is taken over under a new token.
    assert_eq!(
        claim("t3", later).await.unwrap(),
        IdempotencyClaim::New { token: "t3".into() }
    );
    let before = store.invoice_count(tenant).await.unwrap();
    let stale = invoice(tenant);
    assert!(matches!(
        store.insert_invoice(stored(&stale, "k", "t1")).await,
        Err(StoreError::ClaimLost)
    ));
    assert_eq!(
        store.invoice_count(tenant).await.unwrap(),
        before,
        "nothing stored"
    );
    // Nor can the old holder give the key up.
    store
        .release_idempotency_key(tenant, "k", "t1")
        .await
        .unwrap();
    assert_eq!(
        claim("t4", long_ago).await.unwrap(),
        IdempotencyClaim::Running
    );
    let fresh = invoice(tenant);
    store
        .insert_invoice(stored(&fresh, "k", "t3"))
        .await
        .unwrap();
    assert_eq!(store.invoice_count(tenant).await.unwrap(), before + 1);
    assert_eq!(
        claim("t5", later).await.unwrap(),
        IdempotencyClaim::Completed {
            status: 202,
            content_type: "application/json".into(),
            body: "{\"first\":true}".into(),
        }
    );
    assert!(matches!(
        store
            .insert_invoice(stored(&invoice(tenant), "k", "t3"))
            .await,
        Err(StoreError::ClaimLost)
    ));
    let found = store
        .invoices_by_number(tenant, "INV-1", "2027-01-15")
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0], fresh);
}

#[tokio::test]
async fn sqlite_storage() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("nested/dir/invex.db").display()
    );
    let store = Store::connect(&url).await.unwrap();
    suite(&store).await;
    // Reopening runs no migration twice and keeps the data.
    store.close().await;
    let again = Store::connect(&url).await.unwrap();
    assert_eq!(again.tenants(None, 100).await.unwrap().len(), 2);
}

fn uuid_like() -> String {
    new_id("s").trim_start_matches("s_").to_string()
}

#[tokio::test]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn postgres_storage() {
    let (url, _) = crate::support::postgres_schema().await;
    let store = Store::connect(&url).await.unwrap();
    suite(&store).await;
    store.close().await;
    drop_schema(&url).await;
}

/// Remove a test's schema (the URL's search_path).
async fn drop_schema(url: &str) {
    let (base, schema) = url.split_once("options=-c%20search_path%3D").unwrap();
    let base = base.trim_end_matches(['?', '&']);
    let pool = sqlx::PgPool::connect(base).await.unwrap();
    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn two_instances_share_one_postgres_database() {
    let (url, _) = crate::support::postgres_schema().await;
    let a = TestServer::with(|c| c.database_url = url.clone()).await;
    let b = TestServer::with(|c| c.database_url = url.clone()).await;
    // Only the first start bootstrapped; the key works on both.
    assert!(a.running.as_ref().unwrap().bootstrap_key.is_some());
    assert!(b.running.as_ref().unwrap().bootstrap_key.is_none());
    let (_, dev) = a.create_key(BOOTSTRAP, "developer").await;
    let r = b
        .validate(&dev, crate::support::example("invoice-sk.xml"))
        .await;
    assert_eq!(r.status(), 200);
    let result: Value = r.json().await.unwrap();
    let id = result["id"].as_str().unwrap();
    let again: Value = a
        .v1(Method::GET, &format!("/v1/validations/{id}"), &dev)
        .value()
        .await;
    assert_eq!(again, result);
    // Both instances meter the same tenant; their counts add up in the shared table.
    for s in [&a, &b] {
        let r = s
            .v1(Method::GET, "/v1/vat/verify?vat=SK2022749619", &dev)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    for s in [a, b] {
        s.running.unwrap().shutdown().await.unwrap();
    }
    let store = Store::connect(&url).await.unwrap();
    let period = invex_server::usage::current_period();
    assert_eq!(
        store
            .usage_calls(OPERATOR_TENANT_ID, &period, "vat_verify")
            .await
            .unwrap(),
        2
    );
    store.close().await;
    drop_schema(&url).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn two_instances_share_the_outbox_without_double_delivery() {
    let (url, _) = crate::support::postgres_schema().await;
    let a = TestServer::with(|c| c.database_url = url.clone()).await;
    let b = TestServer::with(|c| c.database_url = url.clone()).await;
    let r = a
        .v1(Method::POST, "/v1/connections", BOOTSTRAP)
        .json(&serde_json::json!({"partner": "sandbox"}))
        .send()
        .await
        .unwrap();
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = b
        .v1(
            Method::POST,
            &format!("/v1/connections/{id}/activate"),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut ids = Vec::new();
    for n in 0..12 {
        let s = if n % 2 == 0 { &a } else { &b };
        let r = s
            .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
            .header("Content-Type", "application/xml")
            .header("Idempotency-Key", format!("shared-{n}"))
            .body(crate::support::numbered(
                crate::support::example("invoice-sk.xml"),
                &format!("SHARED-{n}"),
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
        ids.push(
            r.json::<Value>().await.unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    for id in &ids {
        let mut done = None;
        for _ in 0..200 {
            let t: Value = a
                .api(Method::GET, &format!("/api/messages/{id}"), BOOTSTRAP)
                .value()
                .await;
            if t["status"] == "accepted" {
                done = Some(t);
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let t = done.unwrap_or_else(|| panic!("{id} was not delivered"));
        let transmitted = t["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["code"] == "transmitted")
            .count();
        assert_eq!(transmitted, 1, "{t}");
    }
    for s in [a, b] {
        s.running.unwrap().shutdown().await.unwrap();
    }
    drop_schema(&url).await;
}

/// Admin keys of one tenant revoked at the same moment: however the revocations interleave,
/// exactly one admin key stays active (the last-admin rule holds under concurrency).
async fn concurrent_revocations_keep_one_admin(store: &Store) {
    const ROUNDS: usize = 25;
    const ADMINS: usize = 4;
    for round in 0..ROUNDS {
        let tenant = store.create_tenant(&format!("race {round}")).await.unwrap();
        let mut admins = Vec::new();
        for _ in 0..ADMINS {
            let k = key(&tenant.id, "admin", &new_id("h_race"));
            store.insert_key(&k).await.unwrap();
            admins.push(k);
        }
        let developer = key(&tenant.id, "developer", &new_id("h_race"));
        store.insert_key(&developer).await.unwrap();
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(ADMINS));
        let tasks: Vec<_> = admins
            .iter()
            .map(|k| {
                let (store, tenant, id) = (store.clone(), tenant.id.clone(), k.id.clone());
                let barrier = barrier.clone();
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.revoke_key(&tenant, &id).await.unwrap()
                })
            })
            .collect();
        let mut revoked = 0;
        for t in tasks {
            if t.await.unwrap() == RevokeOutcome::Now {
                revoked += 1;
            }
        }
        let active = store
            .active_keys_with_role(&tenant.id, "admin")
            .await
            .unwrap();
        assert_eq!(
            (revoked, active),
            (ADMINS - 1, 1),
            "round {round}: {revoked} revocations went through, {active} admin keys left"
        );
        // Keys of other roles are not held back by the rule.
        assert_eq!(
            store.revoke_key(&tenant.id, &developer.id).await.unwrap(),
            RevokeOutcome::Now
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_concurrent_revocations_keep_one_admin() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("race.db").display());
    let store = Store::connect(&url).await.unwrap();
    concurrent_revocations_keep_one_admin(&store).await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn postgres_concurrent_revocations_keep_one_admin() {
    let (url, _) = crate::support::postgres_schema().await;
    let store = Store::connect(&url).await.unwrap();
    concurrent_revocations_keep_one_admin(&store).await;
    store.close().await;
    drop_schema(&url).await;
}

/// The same over HTTP, on two server instances sharing one PostgreSQL database.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn two_instances_on_postgres_never_revoke_the_last_admin() {
    let (url, _) = crate::support::postgres_schema().await;
    let a = TestServer::with(|c| c.database_url = url.clone()).await;
    let b = TestServer::with(|c| c.database_url = url.clone()).await;
    crate::support::revoke_admin_keys_at_once(&[&a, &b], 10).await;
    for s in [a, b] {
        s.running.unwrap().shutdown().await.unwrap();
    }
    drop_schema(&url).await;
}

/// Two administrators of one tenant demoted or disabled at the same moment (as when each
/// demotes the other): however the changes interleave, exactly one goes through and the
/// tenant keeps one administrator who can sign in.
async fn concurrent_demotions_keep_one_admin(store: &Store) {
    const ROUNDS: usize = 24;
    for round in 0..ROUNDS {
        let tenant = store
            .create_tenant(&format!("demote {round}"))
            .await
            .unwrap();
        let mut admins = Vec::new();
        for n in 0..2 {
            let person = PersonRecord {
                id: new_id("per"),
                tenant_id: tenant.id.clone(),
                email: format!("admin{n}@demote{round}.{}.sk", uuid_like()),
                role: "admin".into(),
                password_hash: Some("$argon2id$stand-in".into()),
                created_at: now(),
                disabled_at: None,
            };
            let link = LinkRecord {
                hash: format!("{:0>64}", new_id("l")),
                person_id: person.id.clone(),
                purpose: "invitation".into(),
                created_at: now(),
                expires_at: now(),
                used_at: None,
            };
            store.insert_person_with_link(&person, &link).await.unwrap();
            admins.push(person.id);
        }
        assert_eq!(store.active_admins(&tenant.id).await.unwrap(), 2);
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(2));
        let tasks: Vec<_> = admins
            .iter()
            .enumerate()
            .map(|(n, id)| {
                let (store, tenant, id) = (store.clone(), tenant.id.clone(), id.clone());
                let barrier = barrier.clone();
                // Both demoted, both disabled, or one of each.
                let disable = match round % 3 {
                    0 => false,
                    1 => true,
                    _ => n == 0,
                };
                tokio::spawn(async move {
                    barrier.wait().await;
                    if disable {
                        store.disable_person(&tenant, &id, &now()).await.unwrap()
                    } else {
                        store
                            .set_person_role(&tenant, &id, "accountant")
                            .await
                            .unwrap()
                    }
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        for t in tasks {
            outcomes.push(match t.await.unwrap() {
                PersonChange::Changed(_) => "changed",
                PersonChange::LastAdmin => "last admin",
                PersonChange::NotFound => "not found",
            });
        }
        outcomes.sort();
        assert_eq!(outcomes, ["changed", "last admin"], "round {round}");
        assert_eq!(
            store.active_admins(&tenant.id).await.unwrap(),
            1,
            "round {round}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_concurrent_demotions_keep_one_admin() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("demote.db").display()
    );
    let store = Store::connect(&url).await.unwrap();
    concurrent_demotions_keep_one_admin(&store).await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn postgres_concurrent_demotions_keep_one_admin() {
    let (url, _) = crate::support::postgres_schema().await;
    let store = Store::connect(&url).await.unwrap();
    concurrent_demotions_keep_one_admin(&store).await;
    store.close().await;
    drop_schema(&url).await;
}

/// Endpoints registered at the same moment never take a tenant past its cap.
async fn concurrent_registrations_keep_to_the_cap(store: &Store) {
    use invex_server::store::webhooks::EndpointRecord;
    const ROUNDS: usize = 10;
    const CAP: u32 = 3;
    const AT_ONCE: usize = 8;
    for round in 0..ROUNDS {
        let tenant = store.create_tenant(&format!("cap {round}")).await.unwrap();
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(AT_ONCE));
        let tasks: Vec<_> = (0..AT_ONCE)
            .map(|n| {
                let store = store.clone();
                let barrier = barrier.clone();
                let record = EndpointRecord {
                    id: new_id("whe"),
                    tenant_id: tenant.id.clone(),
                    url: format!("https://erp{n}.example.com/h"),
                    description: None,
                    event_types: vec!["invoice.failed".into()],
                    enabled: true,
                    disabled_reason: None,
                    secret: "whsec_test".into(),
                    previous_secret: None,
                    previous_expires_at: None,
                    created_at: now(),
                    updated_at: now(),
                };
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.insert_webhook_endpoint(&record, CAP).await.unwrap()
                })
            })
            .collect();
        let mut stored = 0;
        for t in tasks {
            if t.await.unwrap() {
                stored += 1;
            }
        }
        let listed = store
            .webhook_endpoints(&tenant.id, None, 100)
            .await
            .unwrap()
            .len();
        assert_eq!(
            (stored, listed),
            (CAP as usize, CAP as usize),
            "round {round}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_concurrent_registrations_keep_to_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("cap.db").display());
    let store = Store::connect(&url).await.unwrap();
    concurrent_registrations_keep_to_the_cap(&store).await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn postgres_concurrent_registrations_keep_to_the_cap() {
    let (url, _) = crate::support::postgres_schema().await;
    let store = Store::connect(&url).await.unwrap();
    concurrent_registrations_keep_to_the_cap(&store).await;
    store.close().await;
    drop_schema(&url).await;
}

/// Two instances on the database at `url`, each with one batch claimer (two claimers seen
/// means both instances worked), polling quickly, claiming a few documents at a time.
async fn batch_instances(url: &str) -> (TestServer, TestServer) {
    let fast = |c: &mut invex_server::config::Config| {
        c.database_url = url.to_string();
        c.batches.poll_ms = 10;
        c.batches.claim = 4;
        c.batches.loops = 1;
    };
    (TestServer::with(fast).await, TestServer::with(fast).await)
}

#[tokio::test]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn two_instances_on_postgres_share_one_batch_and_process_each_document_once() {
    let (url, _) = crate::support::postgres_schema().await;
    let (a, b) = batch_instances(&url).await;
    let members: Vec<(String, Vec<u8>)> = (1..=200)
        .map(|i| {
            let number = format!("FV-{i:04}");
            (
                format!("invoices/{number}.xml"),
                crate::support::numbered(crate::support::example("invoice-sk.xml"), &number),
            )
        })
        .collect();
    let r = a
        .v1(Method::POST, "/v1/batches", BOOTSTRAP)
        .header("Content-Type", "application/zip")
        .body(crate::support::zip_of(&members))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let start = std::time::Instant::now();
    let done = loop {
        // Either instance answers for the shared batch.
        let v: Value = b
            .v1(Method::GET, &format!("/v1/batches/{id}"), BOOTSTRAP)
            .value()
            .await;
        if v["status"] == "completed" {
            break v;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(120), "{v}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(done["counts"], serde_json::json!({"valid": 200}));
    assert_eq!(done["done"], 200);
    for s in [a, b] {
        s.running.unwrap().shutdown().await.unwrap();
    }
    // Every document was claimed once and recorded once; both instances took part.
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let twice: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM batch_documents WHERE attempts <> 1")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(twice, 0);
    let workers: i64 = sqlx::query_scalar("SELECT COUNT(DISTINCT claimed_by) FROM batch_documents")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(workers, 2, "both instances worked on the batch");
    pool.close().await;
    drop_schema(&url).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn two_instances_on_postgres_check_and_send_a_batch_once() {
    let (url, _) = crate::support::postgres_schema().await;
    let (a, b) = batch_instances(&url).await;
    a.sandbox_connection().await;
    let invoices = |prefix: &str, n: usize| -> Vec<(String, Vec<u8>)> {
        (1..=n)
            .map(|i| {
                let number = format!("{prefix}-{i:03}");
                (
                    format!("{number}.xml"),
                    crate::support::numbered(crate::support::example("invoice-sk.xml"), &number),
                )
            })
            .collect()
    };
    let done = a
        .run_batch(
            "mode=send",
            "application/zip",
            crate::support::zip_of(&invoices("FS", 60)),
        )
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["counts"], serde_json::json!({"queued": 60}));
    // One bad IBAN refuses the next batch whole, on either instance.
    let mut members = invoices("FR", 5);
    let bad = String::from_utf8(crate::support::numbered(
        crate::support::example("invoice-sk.xml"),
        "FR-BAD",
    ))
    .unwrap()
    .replace("SK3112000000198742637541", "SK3112000000198742637542");
    members.push(("bad.xml".into(), bad.into_bytes()));
    let refused = b
        .run_batch(
            "mode=send",
            "application/zip",
            crate::support::zip_of(&members),
        )
        .await;
    assert_eq!(refused["status"], "refused", "{refused}");
    assert_eq!(
        refused["counts"],
        serde_json::json!({"refused": 1, "withheld": 5})
    );
    for s in [a, b] {
        s.running.unwrap().shutdown().await.unwrap();
    }
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let (sent, numbers): (i64, i64) = (
        sqlx::query_scalar("SELECT COUNT(*) FROM invoices")
            .fetch_one(&pool)
            .await
            .unwrap(),
        sqlx::query_scalar("SELECT COUNT(DISTINCT document_id) FROM invoices")
            .fetch_one(&pool)
            .await
            .unwrap(),
    );
    assert_eq!((sent, numbers), (60, 60));
    pool.close().await;
    // An SFTP folder's listing (one query joining files, batches and documents) reads on
    // PostgreSQL too.
    let store = Store::connect(&url).await.unwrap();
    assert!(store
        .sftp_files("sftpnobody", 10, true)
        .await
        .unwrap()
        .is_empty());
    store.close().await;
    drop_schema(&url).await;
}
