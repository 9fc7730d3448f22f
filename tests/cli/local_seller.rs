//! `--local-seller HOST=ADDRESS`, in the release binaries: `terms` and `terms-mcp` reach the stand-in seller on
//! loopback only where the operator names it on the command line, and refuse an address that is not loopback.

use serde_json::{Value, json};

use super::{CONFIG, Run, said, seller};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_seller_flag_naming_a_non_loopback_address_is_refused_by_both_binaries() {
    let run = Run::new(CONFIG).await;
    for bad in ["seller.test=10.0.0.1:80", "seller.test=192.168.1.2:8402", "seller.test", "seller.test=localhost:80"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_terms"))
            .arg("--config")
            .arg(run.dir.path().join("config.toml"))
            .args(["check", &run.url("/report"), "--local-seller", bad])
            .env("TERMS_KEY", seller::KEY)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "terms {bad}: {}", said(&out));
        assert!(said(&out).contains("--local-seller"), "{}", said(&out));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_terms-mcp"))
            .args(["--local-seller", bad])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "terms-mcp {bad}: {}", said(&out));
        assert!(said(&out).contains("--local-seller"), "{}", said(&out));
    }
    assert!(run.seller.seen.lock().unwrap().requests.is_empty(), "nothing was sent");
}

/// `atr_pay` of `https://seller.test/report` through `terms-mcp`: with the flag it pays the stand-in; without it the
/// same call reaches nothing on loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terms_mcp_pays_the_local_seller_only_where_the_flag_names_it() {
    // No policy: the stand-in's policy names its loopback address, not the host the flag routes.
    let config = format!("journal = \"journal.db\"\nkey_env = \"TERMS_KEY\"\nnetwork = {:?}\n", seller::NETWORK);
    let run = Run::new(&config).await;
    let url = format!("https://{}/report", seller::HOST);
    for named in [true, false] {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_terms-mcp"));
        command.arg("--config").arg(run.dir.path().join("config.toml")).env("TERMS_KEY", seller::KEY);
        if named {
            command.arg("--local-seller").arg(run.local());
        }
        let transport = rmcp::transport::TokioChildProcess::new(command).unwrap();
        let client = rmcp::ServiceExt::serve((), transport).await.expect("the server starts");
        let args = json!({"url": url});
        let r = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new("atr_pay").with_arguments(args.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        let v: Value = r.structured_content.clone().unwrap_or_default();
        client.cancel().await.unwrap();
        if named {
            assert_ne!(r.is_error, Some(true), "{v}");
            assert_eq!(v["response"]["status"], 200, "{v}");
            assert_eq!(run.seller.paid("/report"), 1);
        } else {
            assert_eq!(r.is_error, Some(true), "{v}");
            assert_eq!(run.seller.paid("/report"), 1, "nothing more reached the seller: {v}");
        }
    }
}
