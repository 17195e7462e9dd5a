//! `GET /v1/company/sk/{ico}`: the sandbox data set, and the real register clients in
//! production against local servers speaking each register's wire format (RPO REST, RÚZ
//! open API, RPVS OData, Financial Administration open-data lists with the `key` header).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{problem, JsonBody, TestServer, BOOTSTRAP};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use invex_server::company::CompanyConfig;
use reqwest::Method;
use serde_json::{json, Value};

/// The company every stub register knows.
const KNOWN: &str = "31322832";
/// A valid IČO no stub register knows.
const UNKNOWN: &str = "35763469";
const FS_KEY: &str = "test-fs-key";

/// How a stub register behaves.
#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    Answer,
    /// HTTP 500 to everything.
    Fail,
    /// Answers, but only after this long.
    Slow(Duration),
}

#[derive(Clone)]
struct Stub {
    behaviour: Behaviour,
    calls: Arc<AtomicUsize>,
}

impl Stub {
    /// Count the call and apply the behaviour; `Some` is the answer to send instead.
    async fn enter(&self) -> Option<Response> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match self.behaviour {
            Behaviour::Answer => None,
            Behaviour::Fail => {
                Some((StatusCode::INTERNAL_SERVER_ERROR, "register exploded").into_response())
            }
            Behaviour::Slow(d) => {
                tokio::time::sleep(d).await;
                None
            }
        }
    }
}

async fn serve(app: Router) -> String {
    crate::support::serve_stub(app).await
}

type Q = Query<HashMap<String, String>>;

async fn rpo(stub: Stub) -> String {
    let search = |State(stub): State<Stub>, Query(q): Q| async move {
        if let Some(r) = stub.enter().await {
            return r;
        }
        if q.get("identifier").map(String::as_str) != Some(KNOWN) {
            return Json(json!({"results": []})).into_response();
        }
        Json(json!({"results": [{
            "id": 555,
            "identifiers": [{"value": KNOWN, "validFrom": "1992-01-01"}],
            "fullNames": [{"value": "FIRMA Vzor, s. r. o.", "validFrom": "2001-05-02"}]
        }]}))
        .into_response()
    };
    let entity = |State(stub): State<Stub>, Path(id): Path<String>, Query(q): Q| async move {
        if let Some(r) = stub.enter().await {
            return r;
        }
        if id != "555" || q.get("showHistoricalData").map(String::as_str) != Some("true") {
            return (StatusCode::BAD_REQUEST, "unexpected entity request").into_response();
        }
        Json(json!({
            "id": 555,
            "identifiers": [{"value": KNOWN, "validFrom": "1992-01-01"}],
            "fullNames": [
                {"value": "FIRMA Stará, s. r. o.", "validFrom": "1992-01-01", "validTo": "2001-05-01"},
                {"value": "FIRMA Vzor, s. r. o.", "validFrom": "2001-05-02"}
            ],
            "addresses": [
                {"street": "Stará", "buildingNumber": "2", "postalCodes": ["04001"],
                 "municipality": {"value": "Košice", "code": "598186"}, "country": {"value": "Slovenská republika", "code": "703"},
                 "validFrom": "1992-01-01", "validTo": "2009-12-31"},
                {"street": "Hlavná", "regNumber": 1234, "buildingNumber": "5", "postalCodes": ["81101"],
                 "municipality": {"value": "Bratislava", "code": "529346"}, "country": {"value": "Slovenská republika", "code": "703"},
                 "validFrom": "2010-01-01"}
            ],
            "legalForms": [{"value": {"code": "112", "value": "Spoločnosť s ručením obmedzeným"}, "validFrom": "1992-01-01"}],
            "establishment": "1992-01-01",
            "statutoryBodies": [
                {"stakeholderType": {"code": "1", "value": "konateľ"},
                 "personName": {"givenNames": ["Ján"], "familyNames": ["Novák"]},
                 "validFrom": "1992-01-01", "validTo": "2010-01-01"},
                {"stakeholderType": {"code": "1", "value": "konateľ"},
                 "personName": {"formatedName": "Ing. Eva Malá", "givenNames": ["Eva"], "familyNames": ["Malá"]},
                 "validFrom": "2010-01-02"}
            ]
        }))
        .into_response()
    };
    serve(
        Router::new()
            .route("/rpo/v1/search", get(search))
            .route("/rpo/v1/entity/{id}", get(entity))
            .with_state(stub),
    )
    .await
        + "/rpo/v1"
}

async fn ruz(stub: Stub) -> String {
    let units = |State(stub): State<Stub>, Query(q): Q| async move {
        if let Some(r) = stub.enter().await {
            return r;
        }
        if !q.contains_key("zmenene-od") {
            return (StatusCode::BAD_REQUEST, "zmenene-od is required").into_response();
        }
        let ids: Vec<i64> = if q.get("ico").map(String::as_str) == Some(KNOWN) {
            vec![1535938]
        } else {
            vec![]
        };
        Json(json!({"id": ids, "existujeDalsieId": false})).into_response()
    };
    let unit = |State(stub): State<Stub>, Query(q): Q| async move {
        if let Some(r) = stub.enter().await {
            return r;
        }
        if q.get("id").map(String::as_str) != Some("1535938") {
            return StatusCode::NOT_FOUND.into_response();
        }
        Json(json!({
            "id": 1535938, "ico": KNOWN, "dic": "2020123457", "nazovUJ": "FIRMA Vzor, s. r. o.",
            "ulica": "Hlavná 1234/5", "mesto": "Bratislava", "psc": "81101", "skNace": "62010",
            "pravnaForma": "112", "datumZalozenia": "1992-01-01", "konsolidovana": false,
            "idUctovnychZavierok": [4001, 4002], "idVyrocnychSprav": [7001],
            "datumPoslednejUpravy": "2025-06-30"
        }))
        .into_response()
    };
    let statement = |State(stub): State<Stub>, Query(q): Q| async move {
        if let Some(r) = stub.enter().await {
            return r;
        }
        let id: i64 = q.get("id").and_then(|v| v.parse().ok()).unwrap_or(0);
        let year = match id {
            4001 => "2023",
            4002 => "2024",
            _ => return StatusCode::NOT_FOUND.into_response(),
        };
        Json(json!({"id": id, "idUJ": 1535938, "obdobieOd": format!("{year}-01"), "obdobieDo": format!("{year}-12"),
            "typ": "Riadna", "konsolidovana": false, "datumPodania": format!("{}-06-30", year.parse::<i32>().unwrap() + 1),
            "idUctovnychVykazov": [id * 10]}))
        .into_response()
    };
    serve(
        Router::new()
            .route("/cruz-public/api/uctovne-jednotky", get(units))
            .route("/cruz-public/api/uctovna-jednotka", get(unit))
            .route("/cruz-public/api/uctovna-zavierka", get(statement))
            .with_state(stub),
    )
    .await
        + "/cruz-public"
}

async fn rpvs(stub: Stub) -> String {
    let entity = |State(stub): State<Stub>, Path(set): Path<String>, Query(q): Q| async move {
        if let Some(r) = stub.enter().await {
            return r;
        }
        if set == "PartneriVerejnehoSektora" {
            let Some(filter) = q.get("$filter") else {
                return (StatusCode::BAD_REQUEST, "$filter is required").into_response();
            };
            if !q
                .get("$expand")
                .is_some_and(|e| e.split(',').any(|p| p == "Partner"))
            {
                return (StatusCode::BAD_REQUEST, "expand Partner").into_response();
            }
            let value = if filter == &format!("Ico eq '{KNOWN}'") {
                json!([
                    {"Id": 11, "CisloVlozky": 1001, "ObchodneMeno": "FIRMA Vzor, s. r. o.", "Ico": KNOWN,
                     "PlatnostOd": "2017-02-01T00:00:00+01:00", "PlatnostDo": "2019-01-01T00:00:00+01:00",
                     "Partner": {"Id": 776, "CisloVlozky": 1001}},
                    {"Id": 12, "CisloVlozky": 1002, "ObchodneMeno": "FIRMA Vzor, s. r. o.", "Ico": KNOWN,
                     "PlatnostOd": "2019-01-02T00:00:00+01:00", "PlatnostDo": null,
                     "PravnaForma": {"Meno": "Spoločnosť s ručením obmedzeným", "StatistickyKod": "112"},
                     "Adresa": {"MenoUlice": "Hlavná", "OrientacneCislo": "5", "Mesto": "Bratislava", "Psc": "81101"},
                     "Partner": {"Id": 777, "CisloVlozky": 1002}}
                ])
            } else if filter.starts_with("Ico eq '") {
                json!([])
            } else {
                return (StatusCode::BAD_REQUEST, "bad $filter").into_response();
            };
            return Json(
                json!({"@odata.context": "$metadata#PartneriVerejnehoSektora", "value": value}),
            )
            .into_response();
        }
        if set == "Partneri(777)"
            && q.get("$expand").map(String::as_str) == Some("KonecniUzivateliaVyhod")
        {
            return Json(json!({
                "@odata.context": "$metadata#Partneri/$entity", "Id": 777, "CisloVlozky": 1002,
                "KonecniUzivateliaVyhod": [
                    {"Id": 1, "Meno": "Ján", "Priezvisko": "Novák", "TitulPred": "Ing.", "DatumNarodenia": "1970-04-12T00:00:00+01:00",
                     "JeVerejnyCinitel": false, "PlatnostOd": "2019-01-02T00:00:00+01:00", "PlatnostDo": null},
                    {"Id": 2, "Meno": "Eva", "Priezvisko": "Malá", "DatumNarodenia": "1975-01-30T00:00:00+01:00",
                     "JeVerejnyCinitel": true, "PlatnostOd": "2020-03-01T00:00:00+01:00", "PlatnostDo": null}
                ]
            }))
            .into_response();
        }
        (StatusCode::NOT_FOUND, "no such entity set").into_response()
    };
    serve(
        Router::new()
            .route("/opendatav2/{set}", get(entity))
            .with_state(stub),
    )
    .await
        + "/opendatav2"
}

async fn fs(stub: Stub) -> String {
    let search = |State(stub): State<Stub>,
                  Path(dataset): Path<String>,
                  headers: HeaderMap,
                  Query(q): Q| async move {
        if let Some(r) = stub.enter().await {
            return r;
        }
        if headers.get("key").and_then(|v| v.to_str().ok()) != Some(FS_KEY) {
            return (
                StatusCode::UNAUTHORIZED,
                Json(json!({"message": "Unauthorized"})),
            )
                .into_response();
        }
        if dataset != "ds_dsdd" {
            return (
                StatusCode::NOT_FOUND,
                Json(json!({"message": "List not found"})),
            )
                .into_response();
        }
        if q.get("column").map(String::as_str) != Some("nazov_subjektu") || !q.contains_key("page")
        {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"message": "Column is not searchable"})),
            )
                .into_response();
        }
        let search = q.get("search").cloned().unwrap_or_default();
        if !search.starts_with("FIRMA Vzor") {
            return (
                StatusCode::NOT_FOUND,
                Json(json!({"message": "Search not found"})),
            )
                .into_response();
        }
        // A substring search: a similarly named debtor comes back too and must be ignored.
        Json(json!({"page": 1, "pages": 1, "itemsCount": 2, "itemsPerPage": 1000, "data": [
            {"nazov_subjektu": "FIRMA Vzor s.r.o.", "ulica_cislo": "Hlavná 1234/5", "psc": "81101", "obec": "Bratislava", "ciastka": "1520.40"},
            {"nazov_subjektu": "FIRMA Vzor Plus s.r.o.", "ulica_cislo": "Iná 1", "psc": "01001", "obec": "Žilina", "ciastka": "99.00"}
        ]}))
        .into_response()
    };
    serve(
        Router::new()
            .route("/api/data/{dataset}/search", get(search))
            .with_state(stub),
    )
    .await
        + "/api"
}

/// The four stub registers and their call counters.
struct Registers {
    config: CompanyConfig,
    calls: [Arc<AtomicUsize>; 4],
}

impl Registers {
    fn total(&self) -> usize {
        self.calls.iter().map(|c| c.load(Ordering::SeqCst)).sum()
    }
    fn of(&self, i: usize) -> usize {
        self.calls[i].load(Ordering::SeqCst)
    }
}

const RPO: usize = 0;
const RUZ: usize = 1;
const RPVS: usize = 2;
const FS: usize = 3;

/// Stubs with the given behaviours; `None` is a register that is down.
async fn registers(b: [Option<Behaviour>; 4]) -> Registers {
    let calls: [Arc<AtomicUsize>; 4] = Default::default();
    let stub = |i: usize| Stub {
        behaviour: b[i].unwrap_or(Behaviour::Answer),
        calls: calls[i].clone(),
    };
    let url = |i: usize, u: String| async move {
        if b[i].is_some() {
            u
        } else {
            crate::support::dead_endpoint().await
        }
    };
    let config = CompanyConfig {
        rpo_url: url(RPO, rpo(stub(RPO)).await).await,
        ruz_url: url(RUZ, ruz(stub(RUZ)).await).await,
        rpvs_url: url(RPVS, rpvs(stub(RPVS)).await).await,
        fs_url: url(FS, fs(stub(FS)).await).await,
        fs_api_key: Some(FS_KEY.to_string()),
        ..CompanyConfig::default()
    };
    Registers { config, calls }
}

const ALL_UP: [Option<Behaviour>; 4] = [Some(Behaviour::Answer); 4];

async fn production(company: CompanyConfig, budget_ms: u64) -> TestServer {
    TestServer::with(move |c| {
        c.mode = invex_server::Mode::Production;
        c.register_timeout_ms = budget_ms;
        c.company = company;
    })
    .await
}

async fn ask(s: &TestServer, ico: &str) -> reqwest::Response {
    s.v1(Method::GET, &format!("/v1/company/sk/{ico}"), BOOTSTRAP)
        .send()
        .await
        .unwrap()
}

async fn answer(s: &TestServer, ico: &str) -> Value {
    let r = ask(s, ico).await;
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

fn assert_group(body: &Value, group: &str, status: &str) {
    let g = &body[group];
    assert_eq!(g["status"], status, "{group}: {g}");
    assert!(g["fetched_at"].as_str().unwrap().ends_with('Z'), "{g}");
    assert!(g["source"].is_string(), "{g}");
    if status == "ok" {
        assert!(g["data"].is_object(), "{group}: {g}");
    } else {
        assert!(g["data"].is_null(), "{group}: {g}");
        assert!(!g["detail"].as_str().unwrap().is_empty(), "{group}: {g}");
    }
}

#[tokio::test]
async fn production_answers_every_group_from_the_registers() {
    let regs = registers(ALL_UP).await;
    let s = production(regs.config.clone(), 2000).await;
    let body = answer(&s, KNOWN).await;
    assert_eq!(body["ico"], KNOWN);
    assert_eq!(body["name"], "FIRMA Vzor, s. r. o.");
    assert_eq!(body["environment"], "production");
    assert_eq!(body["partial"], false);
    for g in [
        "commercial_register",
        "debtors",
        "financial_results",
        "public_sector_partners",
    ] {
        assert_group(&body, g, "ok");
        assert_eq!(body[g]["cached"], false);
        assert!(body[g]["source_url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1"));
    }

    let rpo = &body["commercial_register"]["data"];
    assert!(body["commercial_register"]["source"]
        .as_str()
        .unwrap()
        .starts_with("RPO"));
    assert_eq!(rpo["rpo_id"], 555);
    assert_eq!(rpo["current_name"], "FIRMA Vzor, s. r. o.");
    assert_eq!(rpo["names"].as_array().unwrap().len(), 2);
    assert_eq!(rpo["names"][0]["valid_to"], "2001-05-01");
    assert_eq!(
        rpo["current_address"],
        "Hlavná 1234/5, 81101 Bratislava, Slovenská republika"
    );
    assert_eq!(rpo["addresses"].as_array().unwrap().len(), 2);
    assert_eq!(rpo["legal_form"]["code"], "112");
    assert_eq!(rpo["established"], "1992-01-01");
    assert!(rpo["terminated"].is_null());
    assert_eq!(rpo["statutory_bodies"][0]["name"], "Ján Novák");
    assert_eq!(rpo["statutory_bodies"][0]["valid_to"], "2010-01-01");
    assert_eq!(rpo["statutory_bodies"][1]["name"], "Ing. Eva Malá");
    assert_eq!(rpo["statutory_bodies"][1]["role"], "konateľ");

    let ruz = &body["financial_results"]["data"];
    assert_eq!(ruz["ruz_id"], 1535938);
    assert_eq!(ruz["dic"], "2020123457");
    assert_eq!(ruz["sk_nace"], "62010");
    assert_eq!(ruz["address"]["postal_code"], "81101");
    assert_eq!(ruz["statement_ids"], json!([4002, 4001]));
    assert_eq!(ruz["annual_report_ids"], json!([7001]));
    assert_eq!(ruz["statements"][0]["period_from"], "2024-01");
    assert_eq!(ruz["statements"][0]["period_to"], "2024-12");
    assert_eq!(ruz["statements"][0]["kind"], "Riadna");
    assert_eq!(ruz["statements"][1]["id"], 4001);

    let rpvs = &body["public_sector_partners"]["data"];
    assert_eq!(rpvs["entry_number"], "1002", "the registration in force");
    assert!(rpvs["registered_to"].is_null());
    assert_eq!(rpvs["legal_form"], "Spoločnosť s ručením obmedzeným");
    assert_eq!(rpvs["address"], "Hlavná 5, 81101 Bratislava");
    let owners = rpvs["beneficial_owners"].as_array().unwrap();
    assert_eq!(owners.len(), 2);
    assert_eq!(owners[0]["name"], "Ing. Ján Novák");
    assert_eq!(owners[1]["public_official"], true);

    let debtors = &body["debtors"]["data"];
    assert_eq!(debtors["tax_debtor"], true);
    assert_eq!(debtors["matched_by"], "name");
    assert_eq!(debtors["searched_name"], "FIRMA Vzor, s. r. o.");
    let debts = debtors["tax_debts"].as_array().unwrap();
    assert_eq!(
        debts.len(),
        1,
        "the similarly named debtor is not this company"
    );
    assert_eq!(debts[0]["amount"], "1520.40");
    assert_eq!(debtors["not_covered"].as_array().unwrap().len(), 2);
    assert!(debtors["not_covered"][0]
        .as_str()
        .unwrap()
        .contains("Sociálna poisťovňa"));

    // Two calls to RPO, four to RÚZ (list, unit, two statements), two to RPVS, one to FS.
    assert_eq!(
        [regs.of(RPO), regs.of(RUZ), regs.of(RPVS), regs.of(FS)],
        [2, 4, 2, 1]
    );
}

#[tokio::test]
async fn a_failing_register_leaves_its_group_unavailable_and_the_answer_partial() {
    // RÚZ answers 500.
    let regs = registers([
        Some(Behaviour::Answer),
        Some(Behaviour::Fail),
        Some(Behaviour::Answer),
        Some(Behaviour::Answer),
    ])
    .await;
    let s = production(regs.config.clone(), 2000).await;
    let body = answer(&s, KNOWN).await;
    assert_eq!(body["partial"], true);
    assert_group(&body, "financial_results", "unavailable");
    assert!(
        body["financial_results"]["detail"]
            .as_str()
            .unwrap()
            .contains("HTTP 500"),
        "{body}"
    );
    assert_group(&body, "commercial_register", "ok");
    assert_group(&body, "public_sector_partners", "ok");
    assert_group(&body, "debtors", "ok");

    // RPO unreachable (closed port): the name for the debtor search comes from RÚZ.
    let regs = registers([
        None,
        Some(Behaviour::Answer),
        Some(Behaviour::Answer),
        Some(Behaviour::Answer),
    ])
    .await;
    let s = production(regs.config.clone(), 2000).await;
    let body = answer(&s, KNOWN).await;
    assert_eq!(body["partial"], true);
    assert_group(&body, "commercial_register", "unavailable");
    assert!(body["commercial_register"]["detail"]
        .as_str()
        .unwrap()
        .contains("cannot be reached"));
    assert_group(&body, "financial_results", "ok");
    assert_group(&body, "debtors", "ok");
    assert_eq!(body["debtors"]["data"]["tax_debtor"], true);
    assert_eq!(
        body["name"], "FIRMA Vzor, s. r. o.",
        "best known name from RÚZ"
    );
}

#[tokio::test]
async fn a_slow_register_never_holds_the_request_beyond_the_budget() {
    let regs = registers([
        Some(Behaviour::Answer),
        Some(Behaviour::Answer),
        Some(Behaviour::Slow(Duration::from_secs(5))),
        Some(Behaviour::Answer),
    ])
    .await;
    let s = production(regs.config.clone(), 600).await;
    let started = Instant::now();
    let body = answer(&s, KNOWN).await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(2000), "took {took:?}");
    assert_eq!(body["partial"], true);
    assert_group(&body, "public_sector_partners", "unavailable");
    assert!(
        body["public_sector_partners"]["detail"]
            .as_str()
            .unwrap()
            .contains("time budget"),
        "{body}"
    );
    assert_group(&body, "commercial_register", "ok");
    assert_group(&body, "financial_results", "ok");
    assert_group(&body, "debtors", "ok");
}

#[tokio::test]
async fn an_unknown_ico_is_not_found_in_every_register() {
    let regs = registers(ALL_UP).await;
    let s = production(regs.config.clone(), 2000).await;
    let body = answer(&s, UNKNOWN).await;
    assert_eq!(body["partial"], false);
    assert!(body["name"].is_null());
    for g in [
        "commercial_register",
        "debtors",
        "financial_results",
        "public_sector_partners",
    ] {
        assert_group(&body, g, "not_found");
    }
    // Without a name there is nothing to search the debtor list for.
    assert_eq!(regs.of(FS), 0);
}

#[tokio::test]
async fn a_bad_ico_is_a_400_problem_naming_the_fault_and_no_register_is_asked() {
    let regs = registers(ALL_UP).await;
    let s = production(regs.config.clone(), 2000).await;
    for (ico, fault) in [
        ("31322833", "check-digit"),
        ("3132283", "length"),
        ("3132283A", "not-digit"),
    ] {
        let p = problem(ask(&s, ico).await, 400).await;
        assert!(p["type"].as_str().unwrap().ends_with("#invalid-ico"), "{p}");
        assert_eq!(p["fault"], fault, "{p}");
        assert_eq!(p["ico"], ico);
        assert!(!p["detail"].as_str().unwrap().is_empty());
    }
    assert_eq!(regs.total(), 0);
}

#[tokio::test]
async fn answers_are_cached_per_register_but_outages_are_not() {
    // RPVS fails; the other three answer.
    let regs = registers([
        Some(Behaviour::Answer),
        Some(Behaviour::Answer),
        Some(Behaviour::Fail),
        Some(Behaviour::Answer),
    ])
    .await;
    let s = production(regs.config.clone(), 2000).await;
    let first = answer(&s, KNOWN).await;
    let after_first = [regs.of(RPO), regs.of(RUZ), regs.of(RPVS), regs.of(FS)];
    let second = answer(&s, KNOWN).await;
    let after_second = [regs.of(RPO), regs.of(RUZ), regs.of(RPVS), regs.of(FS)];
    for (g, i) in [
        ("commercial_register", RPO),
        ("financial_results", RUZ),
        ("debtors", FS),
    ] {
        assert_eq!(after_second[i], after_first[i], "{g} was asked again");
        assert_eq!(first[g]["cached"], false);
        assert_eq!(second[g]["cached"], true, "{g}");
        assert_eq!(second[g]["fetched_at"], first[g]["fetched_at"], "{g}");
        assert_eq!(second[g]["data"], first[g]["data"], "{g}");
    }
    // The outage is asked again.
    assert_eq!(after_second[RPVS], after_first[RPVS] + 1);
    assert_eq!(second["public_sector_partners"]["status"], "unavailable");

    // `not_found` is cached too.
    answer(&s, UNKNOWN).await;
    let before = regs.of(RPO) + regs.of(RUZ);
    let again = answer(&s, UNKNOWN).await;
    assert_eq!(regs.of(RPO) + regs.of(RUZ), before);
    assert_eq!(again["commercial_register"]["status"], "not_found");
    assert_eq!(again["commercial_register"]["cached"], true);
}

#[tokio::test]
async fn without_an_fs_key_the_debtors_group_says_so() {
    let regs = registers(ALL_UP).await;
    let mut config = regs.config.clone();
    config.fs_api_key = None;
    let s = production(config, 2000).await;
    let body = answer(&s, KNOWN).await;
    assert_group(&body, "debtors", "unavailable");
    assert!(body["debtors"]["detail"]
        .as_str()
        .unwrap()
        .contains("INVEX_FS_API_KEY"));
    assert_eq!(body["partial"], true);
    assert_eq!(regs.of(FS), 0);
    assert_group(&body, "commercial_register", "ok");
}

#[tokio::test]
async fn no_register_answering_is_a_503_with_each_reason() {
    let regs = registers([None, None, None, None]).await;
    let s = production(regs.config.clone(), 1000).await;
    let r = ask(&s, KNOWN).await;
    assert_eq!(r.headers()["retry-after"], "60");
    let p = problem(r, 503).await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#company-registers-unavailable"));
    assert_eq!(p["unavailable"].as_object().unwrap().len(), 4, "{p}");
    // Production needs a key on this route.
    problem(
        s.client
            .get(s.url(&format!("/v1/company/sk/{KNOWN}")))
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
}

#[tokio::test]
async fn the_sandbox_answers_from_its_data_set_without_a_key() {
    let s = TestServer::start().await;
    let get = |ico: &str| s.client.get(s.url(&format!("/v1/company/sk/{ico}"))).send();

    let r = get("99900017").await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["invex-environment"], "sandbox");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["environment"], "sandbox");
    assert_eq!(body["partial"], false);
    assert!(body["name"].as_str().unwrap().starts_with("Sandbox"));
    for g in [
        "commercial_register",
        "debtors",
        "financial_results",
        "public_sector_partners",
    ] {
        assert_eq!(body[g]["source"], "sandbox", "{g}");
        assert!(body[g]["source_url"].is_null());
    }
    assert_group(&body, "commercial_register", "ok");
    assert_eq!(
        body["commercial_register"]["data"]["names"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(body["debtors"]["data"]["tax_debtor"], false);
    assert_group(&body, "public_sector_partners", "not_found");

    let debtor: Value = get("99900025").await.unwrap().json().await.unwrap();
    assert_eq!(debtor["debtors"]["data"]["tax_debtor"], true);
    assert!(debtor["debtors"]["data"]["tax_debts"][0]["amount"].is_string());

    let terminated: Value = get("99900033").await.unwrap().json().await.unwrap();
    assert!(terminated["commercial_register"]["data"]["terminated"].is_string());
    assert!(terminated["financial_results"]["data"]["dissolved"].is_string());

    let partner: Value = get("99900041").await.unwrap().json().await.unwrap();
    assert_group(&partner, "public_sector_partners", "ok");
    assert_eq!(
        partner["public_sector_partners"]["data"]["beneficial_owners"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let newcomer: Value = get("99900050").await.unwrap().json().await.unwrap();
    assert_group(&newcomer, "financial_results", "not_found");
    assert_group(&newcomer, "commercial_register", "ok");

    // Any other valid IČO is unknown everywhere; a legacy 6-digit IČO is read padded.
    let unknown: Value = get("151742").await.unwrap().json().await.unwrap();
    assert_eq!(unknown["ico"], "00151742");
    for g in [
        "commercial_register",
        "debtors",
        "financial_results",
        "public_sector_partners",
    ] {
        assert_group(&unknown, g, "not_found");
    }
    // The check digit is checked in the sandbox too.
    let p = problem(get("99900018").await.unwrap(), 400).await;
    assert_eq!(p["fault"], "check-digit");
    // And /v2 mirrors it as a beta.
    let r = s
        .client
        .get(s.url("/v2/company/sk/99900017"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["invex-api-stability"], "beta");
}

/// Every `$ref` under `value`.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_route_and_its_answer_are_described_in_openapi() {
    let s = TestServer::start().await;
    let doc: Value = s.client.get(s.url("/openapi.json")).value().await;
    let op = &doc["paths"]["/v1/company/sk/{ico}"]["get"];
    assert!(op.is_object(), "route not described");
    for status in ["200", "400", "503"] {
        assert!(op["responses"][status].is_object(), "{status}");
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    assert!(schemas.contains_key("CompanyAnswer"));
    let mut all = Vec::new();
    refs(&doc, &mut all);
    for r in all {
        let name = r.trim_start_matches("#/components/schemas/");
        assert!(schemas.contains_key(name), "dangling $ref {r}");
    }
}
