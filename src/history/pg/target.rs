//! Where a PostgreSQL history is: the `--db`/`CANDOR_DB` value read as libpq reads a
//! connection string (URL or `key=value` form), completed from a `service=` entry of the
//! service file and the `PG*` variables, and the TLS that connecting takes. No libpq:
//! the `postgres` crate connects, rustls speaks TLS.

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use percent_encoding::percent_decode_str;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

/// Connection parameters candor handles itself rather than handing to the client crate.
const OWN_KEYS: [&str; 4] = ["service", "sslmode", "sslrootcert", "passfile"];

/// Parameters the client crate takes as they are.
const CLIENT_KEYS: [&str; 19] = [
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslnegotiation",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
    "sslmode",
];

/// Every keyword a `key=value` connection string may start with; a `--db` value that
/// starts with one of them followed by `=` is a connection string, not a file name.
const KEYWORDS: [&str; 17] = [
    "passfile",
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "service",
    "sslmode",
    "sslrootcert",
    "connect_timeout",
    "options",
    "application_name",
    "keepalives",
    "target_session_attrs",
    "channel_binding",
    "sslcert",
];

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain connection only.
    Disable,
    /// TLS when the server offers it, without checking the certificate (libpq's `allow`
    /// and `prefer`).
    Prefer,
    /// TLS or nothing; the certificate is checked against `sslrootcert` when one is
    /// given (as libpq does), else not.
    Require,
    /// TLS, the certificate chain checked, not the host name.
    VerifyCa,
    /// TLS, the chain and the host name checked.
    VerifyFull,
}

/// A PostgreSQL history's address, parsed but not connected.
#[derive(Clone)]
pub struct Target {
    /// What the user wrote, password removed: what messages show.
    shown: String,
    /// The parameters, explicit ones first completed from the service file and `PG*`.
    params: BTreeMap<String, String>,
    /// Why the password file was not read, when it exists but libpq's rules refuse it:
    /// added to a failed login's message, where a missing password shows.
    passfile_note: Option<String>,
}

#[expect(
    clippy::missing_fields_in_debug,
    reason = "the connection parameters hold the password"
)]
impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("shown", &self.shown)
            .finish()
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Why a `--db` value that names PostgreSQL cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{reason}")]
pub struct TargetError {
    /// What is wrong, naming the parameter.
    pub reason: String,
}

fn bad(reason: impl Into<String>) -> TargetError {
    TargetError {
        reason: reason.into(),
    }
}

/// Whether a `--db` value names a PostgreSQL history rather than a SQLite file.
pub fn is_postgres(value: &str) -> bool {
    if value.starts_with("postgres://") || value.starts_with("postgresql://") {
        return true;
    }
    let first = value.trim_start();
    KEYWORDS.iter().any(|key| {
        first
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    })
}

impl Target {
    /// Parses a URL or `key=value` string, then fills what it leaves open from its
    /// service (`service=`, else `PGSERVICE`) and the `PG*` variables read through `var`,
    /// in libpq's order: explicit, service file, environment, defaults.
    pub fn parse(value: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<Target, TargetError> {
        let explicit = if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            parse_url(value)?
        } else {
            parse_keywords(value)?
        };
        let mut params = explicit.clone();
        let service = params.get("service").cloned().or_else(|| var("PGSERVICE"));
        if let Some(service) = service {
            for (key, value) in read_service(&service, var)? {
                params.entry(key).or_insert(value);
            }
        }
        for (key, name) in [
            ("host", "PGHOST"),
            ("hostaddr", "PGHOSTADDR"),
            ("port", "PGPORT"),
            ("dbname", "PGDATABASE"),
            ("user", "PGUSER"),
            ("password", "PGPASSWORD"),
            ("sslmode", "PGSSLMODE"),
            ("sslrootcert", "PGSSLROOTCERT"),
            ("connect_timeout", "PGCONNECT_TIMEOUT"),
            ("application_name", "PGAPPNAME"),
            ("options", "PGOPTIONS"),
        ] {
            if let Some(value) = var(name).filter(|v| !v.is_empty()) {
                params.entry(key.to_owned()).or_insert(value);
            }
        }
        if !params.contains_key("host") && !params.contains_key("hostaddr") {
            // libpq's default: the Unix socket folder of the distribution's server.
            let socket = ["/var/run/postgresql", "/tmp"]
                .into_iter()
                .find(|dir| Path::new(dir).is_dir())
                .unwrap_or("localhost");
            params.insert("host".into(), socket.into());
        }
        if !params.contains_key("user") {
            let user = var("USER").or_else(|| var("LOGNAME")).ok_or_else(|| {
                bad("no user: give one in the URL (postgres://USER@HOST/DB) or in PGUSER")
            })?;
            params.insert("user".into(), user);
        }
        params
            .entry("application_name".into())
            .or_insert_with(|| "candor".into());
        let mut passfile_note = None;
        if !params.contains_key("password") {
            match password_from_file(&params, var) {
                Ok(Some(password)) => {
                    params.insert("password".into(), password);
                }
                Ok(None) => {}
                Err(note) => passfile_note = Some(note),
            }
        }
        let target = Target {
            shown: redact(value),
            params,
            passfile_note,
        };
        // Every parameter is checked now, before anything is read or connected.
        target.client_config()?;
        if target.ssl_mode()? != SslMode::Disable {
            target.tls()?;
        }
        Ok(target)
    }

    /// Why the password file was passed over, when it was (group- or world-readable, not a
    /// plain file): said beside a failed login.
    pub fn passfile_note(&self) -> Option<&str> {
        self.passfile_note.as_deref()
    }

    /// The `sslmode` in force (libpq's default is `prefer`).
    pub fn ssl_mode(&self) -> Result<SslMode, TargetError> {
        Ok(match self.params.get("sslmode").map(String::as_str) {
            None | Some("prefer" | "allow") => SslMode::Prefer,
            Some("disable") => SslMode::Disable,
            Some("require") => SslMode::Require,
            Some("verify-ca") => SslMode::VerifyCa,
            Some("verify-full") => SslMode::VerifyFull,
            Some(other) => {
                return Err(bad(format!(
                    "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )));
            }
        })
    }

    /// The client crate's configuration (everything but TLS).
    pub fn client_config(&self) -> Result<postgres::Config, TargetError> {
        let mut text = String::new();
        for (key, value) in &self.params {
            if OWN_KEYS.contains(&key.as_str()) {
                continue;
            }
            if matches!(key.as_str(), "sslcert" | "sslkey" | "sslpassword") {
                return Err(bad(format!(
                    "{key}: client certificates are not supported yet; authenticate with a password"
                )));
            }
            if !CLIENT_KEYS.contains(&key.as_str()) {
                return Err(bad(format!(
                    "`{key}` is not a connection parameter candor knows"
                )));
            }
            let escaped = value.replace('\\', "\\\\").replace('\'', "\\'");
            let _ = write!(text, "{key}='{escaped}' ");
        }
        let mut config: postgres::Config = text.parse().map_err(|e: postgres::Error| {
            // The crate's message does not name the parameter; its source does.
            let cause = std::error::Error::source(&e).map(ToString::to_string);
            bad(cause.map_or_else(|| e.to_string(), |cause| format!("{e}: {cause}")))
        })?;
        config.ssl_mode(match self.ssl_mode()? {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                postgres::config::SslMode::Require
            }
        });
        if config.get_connect_timeout().is_none() {
            // libpq waits forever; a CI job should fail instead.
            config.connect_timeout(Duration::from_secs(30));
        }
        Ok(config)
    }

    /// The rustls configuration for the `sslmode` and `sslrootcert` in force.
    pub fn tls(&self) -> Result<rustls::ClientConfig, TargetError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(format!("TLS: {e}")))?;
        let roots = self.roots()?;
        let mode = self.ssl_mode()?;
        let verify = match mode {
            SslMode::Disable | SslMode::Prefer => false,
            SslMode::Require => roots.is_some(),
            SslMode::VerifyCa | SslMode::VerifyFull => true,
        };
        if !verify {
            return Ok(builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
                .with_no_client_auth());
        }
        let roots = roots.unwrap_or_else(|| {
            let mut store = RootCertStore::empty();
            store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            store
        });
        let webpki =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| bad(format!("TLS: {e}")))?;
        if mode == SslMode::VerifyFull {
            return Ok(builder.with_webpki_verifier(webpki).with_no_client_auth());
        }
        Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
            .with_no_client_auth())
    }

    /// The CA certificates of `sslrootcert`, when it names a file (`system` or nothing:
    /// the Mozilla roots of `webpki-roots`).
    fn roots(&self) -> Result<Option<RootCertStore>, TargetError> {
        let Some(path) = self.params.get("sslrootcert").filter(|p| *p != "system") else {
            return Ok(None);
        };
        let path = PathBuf::from(path);
        let mut store = RootCertStore::empty();
        let certs = CertificateDer::pem_file_iter(&path)
            .map_err(|e| bad(format!("sslrootcert {}: {e}", path.display())))?;
        for cert in certs {
            let cert = cert.map_err(|e| bad(format!("sslrootcert {}: {e}", path.display())))?;
            store
                .add(cert)
                .map_err(|e| bad(format!("sslrootcert {}: {e}", path.display())))?;
        }
        if store.is_empty() {
            return Err(bad(format!(
                "sslrootcert {} holds no PEM certificate",
                path.display()
            )));
        }
        Ok(Some(store))
    }
}

/// Hides the password of a URL or `key=value` string.
pub fn redact(value: &str) -> String {
    if let Some((scheme, rest)) = value.split_once("://") {
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        if let Some((userinfo, host)) = authority.rsplit_once('@')
            && let Some((user, _)) = userinfo.split_once(':')
        {
            return format!("{scheme}://{user}:***@{host}{tail}");
        }
        let tail = hide_query_password(tail);
        return format!("{scheme}://{authority}{tail}");
    }
    value
        .split_whitespace()
        .map(|part| {
            if part.starts_with("password=") {
                "password=***"
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn hide_query_password(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_owned();
    };
    let query: Vec<&str> = query
        .split('&')
        .map(|pair| {
            if pair.starts_with("password=") {
                "password=***"
            } else {
                pair
            }
        })
        .collect();
    format!("{path}?{}", query.join("&"))
}

fn decode(text: &str) -> Result<String, TargetError> {
    percent_decode_str(text)
        .decode_utf8()
        .map(std::borrow::Cow::into_owned)
        .map_err(|_| bad(format!("`{text}` is not UTF-8 once percent-decoded")))
}

/// `postgres[ql]://[user[:password]@][host[:port][,…]][/dbname][?key=value&…]`.
fn parse_url(value: &str) -> Result<BTreeMap<String, String>, TargetError> {
    let rest = value
        .split_once("://")
        .map(|(_, rest)| rest)
        .ok_or_else(|| bad("not a URL"))?;
    let mut params = BTreeMap::new();
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let (authority, dbname) = match rest.split_once('/') {
        Some((authority, dbname)) => (authority, Some(dbname)),
        None => (rest, None),
    };
    let hosts = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => {
            let (user, password) = match userinfo.split_once(':') {
                Some((user, password)) => (user, Some(password)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                params.insert("user".into(), decode(user)?);
            }
            if let Some(password) = password {
                params.insert("password".into(), decode(password)?);
            }
            hosts
        }
        None => authority,
    };
    if !hosts.is_empty() {
        let mut names = Vec::new();
        let mut ports = Vec::new();
        for host in hosts.split(',') {
            let (name, port) = if let Some(inner) = host.strip_prefix('[') {
                let (name, after) = inner
                    .split_once(']')
                    .ok_or_else(|| bad(format!("`{host}`: unclosed [ in the host")))?;
                (name, after.strip_prefix(':'))
            } else {
                match host.rsplit_once(':') {
                    Some((name, port)) => (name, Some(port)),
                    None => (host, None),
                }
            };
            names.push(decode(name)?);
            ports.push(port.unwrap_or("").to_owned());
        }
        params.insert("host".into(), names.join(","));
        if ports.iter().any(|p| !p.is_empty()) {
            params.insert("port".into(), ports.join(","));
        }
    }
    if let Some(dbname) = dbname.filter(|d| !d.is_empty()) {
        params.insert("dbname".into(), decode(dbname)?);
    }
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        if pair.is_empty() {
            continue;
        }
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| bad(format!("`{pair}` in the URL's query is not key=value")))?;
        params.insert(decode(key)?, decode(value)?);
    }
    Ok(params)
}

/// libpq's `key=value key='quoted value'` form.
fn parse_keywords(value: &str) -> Result<BTreeMap<String, String>, TargetError> {
    let mut params = BTreeMap::new();
    let mut chars = value.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            return Err(bad(format!("`{key}` is not followed by =")));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut text = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err(bad(format!("the value of `{key}` has no closing '"))),
                    Some('\'') => break,
                    Some('\\') => text.extend(chars.next()),
                    Some(c) => text.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                if c == '\\' {
                    chars.next();
                    text.extend(chars.next());
                    continue;
                }
                text.push(c);
                chars.next();
            }
        }
        params.insert(key, text);
    }
    Ok(params)
}

/// The password the password file holds for these parameters, as libpq finds it: the
/// file is `passfile`, else `PGPASSFILE`, else `~/.pgpass`; a missing file is no password;
/// a file that is not a plain file or that group or others may read is passed over
/// (`Err` says why, for the message of a failed login).
fn password_from_file(
    params: &BTreeMap<String, String>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, String> {
    let file: PathBuf = match params
        .get("passfile")
        .cloned()
        .or_else(|| var("PGPASSFILE"))
    {
        Some(file) => file.into(),
        None => match var("HOME") {
            Some(home) => Path::new(&home).join(".pgpass"),
            None => return Ok(None),
        },
    };
    let Ok(meta) = std::fs::metadata(&file) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Err(format!(
            "the password file {} was not read: it is not a plain file",
            file.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "the password file {} was not read: group or others may access it (mode {mode:04o}); \
                 `chmod 600 {}` as libpq requires",
                file.display(),
                file.display()
            ));
        }
    }
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(None);
    };
    let first = |key: &str| {
        params
            .get(key)
            .and_then(|v| v.split(',').next())
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let host = first("host").or_else(|| first("hostaddr"));
    // A socket folder is `localhost` in the file, as libpq compares it.
    let host = match host {
        Some(host) if !host.starts_with('/') && !host.starts_with('@') => host,
        _ => "localhost".to_owned(),
    };
    let port = first("port").unwrap_or_else(|| "5432".to_owned());
    let user = first("user").unwrap_or_default();
    let dbname = params
        .get("dbname")
        .cloned()
        .unwrap_or_else(|| user.clone());
    Ok(pgpass_password(&text, [&host, &port, &dbname, &user]))
}

/// The password of the first line of a `.pgpass` text whose `host:port:database:user`
/// match `wanted` (`*` matches anything; `\` escapes `:` and `\`), as libpq reads it.
pub(crate) fn pgpass_password(text: &str, wanted: [&str; 4]) -> Option<String> {
    'lines: for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields: Vec<(String, bool)> = Vec::with_capacity(5);
        let mut current = String::new();
        let mut escaped_any = false;
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' if fields.len() < 4 => {
                    escaped_any = true;
                    if let Some(next) = chars.next() {
                        current.push(next);
                    }
                }
                ':' if fields.len() < 4 => {
                    fields.push((std::mem::take(&mut current), escaped_any));
                    escaped_any = false;
                }
                '\\' => {
                    if let Some(next) = chars.next() {
                        current.push(next);
                    }
                }
                c => current.push(c),
            }
        }
        if fields.len() < 4 {
            continue;
        }
        for ((field, escaped), want) in fields.iter().zip(wanted) {
            let any = field == "*" && !escaped;
            if !any && field != want {
                continue 'lines;
            }
        }
        return Some(current);
    }
    None
}

/// The parameters of `[name]` in the service file: `PGSERVICEFILE`, else
/// `~/.pg_service.conf`, else `PGSYSCONFDIR/pg_service.conf`.
fn read_service(
    name: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, TargetError> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(file) = var("PGSERVICEFILE") {
        candidates.push(file.into());
    } else {
        if let Some(home) = var("HOME") {
            candidates.push(Path::new(&home).join(".pg_service.conf"));
        }
        if let Some(dir) = var("PGSYSCONFDIR") {
            candidates.push(Path::new(&dir).join("pg_service.conf"));
        }
    }
    for file in &candidates {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let mut inside = false;
        let mut found = false;
        let mut params = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                inside = section == name;
                found |= inside;
                continue;
            }
            if inside {
                let (key, value) = line.split_once('=').ok_or_else(|| {
                    bad(format!(
                        "{}:{}: `{line}` is not key=value",
                        file.display(),
                        number + 1
                    ))
                })?;
                params.push((key.trim().to_owned(), value.trim().to_owned()));
            }
        }
        if found {
            return Ok(params);
        }
    }
    let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    Err(bad(format!(
        "service `{name}` is not defined (looked in: {})",
        if looked.is_empty() {
            "no service file: set PGSERVICEFILE".to_owned()
        } else {
            looked.join(", ")
        }
    )))
}

/// `sslmode=require` without a CA: encrypted, not authenticated, as libpq does.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the name is not compared.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName
                | rustls::CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn urls_and_keyword_strings_name_postgres_and_paths_do_not() {
        for yes in [
            "postgres://h/db",
            "postgresql://",
            "service=ci",
            "host=/tmp dbname=x",
        ] {
            assert!(is_postgres(yes), "{yes}");
        }
        for no in [
            ".candor/history.db",
            "/tmp/h.db",
            "hostfile.db",
            "my=file.db",
        ] {
            assert!(!is_postgres(no), "{no}");
        }
    }

    #[test]
    fn a_url_is_explicit_and_pg_variables_fill_the_rest() {
        let env = vars(&[
            ("PGUSER", "fromenv"),
            ("PGPORT", "6543"),
            ("PGDATABASE", "envdb"),
        ]);
        let target = Target::parse(
            "postgres://ci:s%40cret@db.example:5433/hist?sslmode=require",
            &env,
        )
        .unwrap();
        assert_eq!(
            target.to_string(),
            "postgres://ci:***@db.example:5433/hist?sslmode=require"
        );
        let config = target.client_config().unwrap();
        assert_eq!(config.get_user(), Some("ci"));
        assert_eq!(config.get_password(), Some(&b"s@cret"[..]));
        assert_eq!(config.get_dbname(), Some("hist"));
        assert_eq!(config.get_ports(), &[5433]);
        assert_eq!(target.ssl_mode().unwrap(), SslMode::Require);

        let bare = Target::parse("postgres://", &env).unwrap();
        let config = bare.client_config().unwrap();
        assert_eq!(config.get_user(), Some("fromenv"));
        assert_eq!(config.get_dbname(), Some("envdb"));
        assert_eq!(config.get_ports(), &[6543]);
    }

    #[test]
    fn a_service_entry_sits_between_explicit_values_and_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("services.conf");
        std::fs::write(
            &file,
            "# comment\n[other]\nuser=no\n[ci]\nhost=/run/pg\nuser=svc\ndbname=svcdb\n",
        )
        .unwrap();
        let file = file.display().to_string();
        let env = move |name: &str| match name {
            "PGSERVICEFILE" => Some(file.clone()),
            "PGUSER" => Some("env".into()),
            "PGPORT" => Some("7000".into()),
            _ => None,
        };
        let target = Target::parse("service=ci dbname='my db'", &env).unwrap();
        let config = target.client_config().unwrap();
        assert_eq!(config.get_user(), Some("svc"));
        assert_eq!(config.get_dbname(), Some("my db"));
        assert_eq!(config.get_ports(), &[7000]);

        let missing = Target::parse("service=nope", &env).unwrap_err();
        assert!(
            missing.reason.contains("service `nope` is not defined"),
            "{missing}"
        );
    }

    #[test]
    fn bad_parameters_are_named() {
        let env = vars(&[("USER", "me")]);
        let error = Target::parse("postgres://h/db?sslmode=sometimes", &env).unwrap_err();
        assert!(error.reason.contains("sslmode=sometimes"), "{error}");
        let error = Target::parse("postgres://h/db?frobnicate=1", &env).unwrap_err();
        assert!(error.reason.contains("frobnicate"), "{error}");
        let error = Target::parse("host=h dbname='x", &env).unwrap_err();
        assert!(error.reason.contains("closing"), "{error}");
        let error = Target::parse(
            "postgres://h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
            &env,
        )
        .unwrap_err();
        assert!(error.reason.contains("/nonexistent/ca.pem"), "{error}");
    }

    /// Issue #17 item 3: `.pgpass` lines match as libpq's do.
    #[test]
    fn pgpass_lines_match_field_by_field_with_wildcards_and_escapes() {
        let text = "# comment\n\
                    db.example:5432:other:ci:wrong-db\n\
                    db.example:*:hist:ci:s3cret\n\
                    *:*:*:ci:fallback\n\
                    h\\:x:1:d:u:esc\\:aped\\\\\n\
                    short:line\n";
        assert_eq!(
            pgpass_password(text, ["db.example", "5433", "hist", "ci"]).as_deref(),
            Some("s3cret")
        );
        assert_eq!(
            pgpass_password(text, ["other.example", "1", "x", "ci"]).as_deref(),
            Some("fallback")
        );
        assert_eq!(
            pgpass_password(text, ["h:x", "1", "d", "u"]).as_deref(),
            Some("esc:aped\\")
        );
        assert_eq!(
            pgpass_password(text, ["db.example", "5432", "hist", "me"]),
            None
        );
        // An escaped `*` is a literal star, not a wildcard.
        assert_eq!(pgpass_password("\\*:*:*:*:p\n", ["h", "1", "d", "u"]), None);
    }

    /// Issue #17 item 3: the file comes from `passfile`, `PGPASSFILE` or `~/.pgpass`;
    /// an explicit password wins; a socket folder is `localhost`; a file others may
    /// read is passed over with a note saying so.
    #[cfg(unix)]
    #[test]
    fn the_password_file_is_found_and_refused_when_others_may_read_it() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "localhost:5432:hist:ci:from-file\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let home = dir.path().display().to_string();
        let path = file.display().to_string();
        let env = move |name: &str| match name {
            "PGPASSFILE" => Some(path.clone()),
            "HOME" => Some(home.clone()),
            _ => None,
        };
        let target = Target::parse("postgresql:///hist?host=/run/pg&user=ci", &env).unwrap();
        let config = target.client_config().unwrap();
        assert_eq!(config.get_password(), Some(&b"from-file"[..]));
        assert_eq!(target.passfile_note(), None);
        let explicit = Target::parse("postgresql://ci:given@localhost/hist", &env).unwrap();
        assert_eq!(
            explicit.client_config().unwrap().get_password(),
            Some(&b"given"[..])
        );

        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let loose = Target::parse("postgresql:///hist?host=/run/pg&user=ci", &env).unwrap();
        assert_eq!(loose.client_config().unwrap().get_password(), None);
        let note = loose.passfile_note().unwrap();
        assert!(
            note.contains("mode 0644") && note.contains("chmod 600"),
            "{note}"
        );

        // ~/.pgpass when PGPASSFILE is not set; `passfile=` wins over both.
        let home = dir.path().to_path_buf();
        std::fs::write(home.join(".pgpass"), "*:*:*:*:home\n").unwrap();
        std::fs::set_permissions(home.join(".pgpass"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        let home_text = home.display().to_string();
        let only_home = move |name: &str| (name == "HOME").then(|| home_text.clone());
        let from_home = Target::parse("host=db user=u dbname=d", &only_home).unwrap();
        assert_eq!(
            from_home.client_config().unwrap().get_password(),
            Some(&b"home"[..])
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let named = Target::parse(
            &format!(
                "host=localhost user=ci dbname=hist passfile={}",
                file.display()
            ),
            &only_home,
        )
        .unwrap();
        assert_eq!(
            named.client_config().unwrap().get_password(),
            Some(&b"from-file"[..])
        );
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            redact("host=h password=x user=u"),
            "host=h password=*** user=u"
        );
        assert_eq!(
            redact("postgres://h/d?password=x"),
            "postgres://h/d?password=***"
        );
    }
}
