//! sno in the git layouts agents use: a linked worktree (`git worktree
//! add`), a git directory kept apart from its work tree (`core.worktree`),
//! and a submodule checkout. In each, sno indexes the right commit and
//! `.sno/` is excluded where git reads exclusions, so `git status` stays
//! clean and `git add -A` can never commit the database.

mod support;

use std::path::Path;
use std::process::Command;

use support::*;

fn git_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = Command::new("git");
    c.args(args).current_dir(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn seeded() -> Repo {
    let repo = Repo::new();
    repo.write("app.py", "def handler():\n    return 1\n");
    repo.commit("first");
    repo
}

#[test]
fn a_linked_worktree_keeps_git_status_clean() {
    let repo = seeded();
    let wt = repo.dir.path().parent().unwrap().join(format!(
        "{}-wt",
        repo.dir.path().file_name().unwrap().to_string_lossy()
    ));
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        wt.to_str().unwrap(),
    ]);
    std::fs::write(wt.join("feature.py"), "def feature_only():\n    pass\n").unwrap();
    git_in(&wt, &["add", "-A"], &[]);
    git_in(&wt, &["commit", "-q", "-m", "feature"], &[]);

    let out = sno_in(&wt, &["init", "--history", "0"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(wt.join(".sno/sno.redb").exists());
    assert_eq!(
        git_in(&wt, &["status", "--porcelain"], &[]),
        "",
        "worktree status"
    );
    // `git add -A` stages nothing of sno's.
    git_in(&wt, &["add", "-A"], &[]);
    assert_eq!(git_in(&wt, &["diff", "--cached", "--name-only"], &[]), "");
    // The worktree's own commit is what got indexed.
    let v: serde_json::Value =
        serde_json::from_slice(&sno_in(&wt, &["symbol", "feature_only", "--json"], &[]).stdout)
            .unwrap();
    assert_eq!(v["results"][0]["path"], "feature.py", "{v}");
    // The main work tree is untouched and clean as well.
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    let _ = std::fs::remove_dir_all(&wt);
}

#[test]
fn a_git_directory_apart_from_its_work_tree() {
    let top = tempfile::tempdir().unwrap();
    let store = top.path().join("store.git");
    let work = top.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let gd = store.to_str().unwrap();
    git_in(
        top.path(),
        &["--git-dir", gd, "init", "-q", "-b", "main"],
        &[],
    );
    git_in(
        top.path(),
        &["--git-dir", gd, "config", "core.bare", "false"],
        &[],
    );
    git_in(
        top.path(),
        &[
            "--git-dir",
            gd,
            "config",
            "core.worktree",
            work.to_str().unwrap(),
        ],
        &[],
    );
    git_in(
        top.path(),
        &["--git-dir", gd, "config", "user.email", "t@example.com"],
        &[],
    );
    git_in(
        top.path(),
        &["--git-dir", gd, "config", "user.name", "t"],
        &[],
    );
    std::fs::write(work.join("lib.py"), "def apart():\n    return 2\n").unwrap();
    let env = [("GIT_DIR", gd)];
    git_in(&work, &["add", "-A"], &env);
    git_in(&work, &["commit", "-q", "-m", "first"], &env);

    let out = sno_in(&work, &["init", "--history", "0"], &env);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        work.join(".sno/sno.redb").exists(),
        "the index lives in the work tree"
    );
    assert!(!store.join(".sno").exists());
    assert_eq!(git_in(&work, &["status", "--porcelain"], &env), "");
    let out = sno_in(&work, &["symbol", "apart"], &env);
    assert!(stdout(&out).contains("lib.py"), "{}", stdout(&out));
}

#[test]
fn a_submodule_checkout_keeps_both_statuses_clean() {
    let inner = seeded();
    let outer = Repo::new();
    outer.write("README.md", "outer\n");
    outer.commit("outer");
    outer.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        inner.path().to_str().unwrap(),
        "sub",
    ]);
    outer.commit("add sub");
    let sub = outer.path().join("sub");
    assert!(sub.join(".git").is_file(), "a submodule's .git is a file");

    let out = sno_in(&sub, &["init", "--history", "0"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(sub.join(".sno/sno.redb").exists());
    assert_eq!(git_in(&sub, &["status", "--porcelain"], &[]), "");
    // The superproject does not see untracked content in the submodule.
    assert_eq!(outer.git(&["status", "--porcelain"]), "");
    let out = sno_in(&sub, &["symbol", "handler"], &[]);
    assert!(stdout(&out).contains("app.py"), "{}", stdout(&out));
}

#[test]
fn a_sparse_checkouts_absent_files_are_not_edits() {
    let repo = Repo::new();
    repo.write(
        "app/main.py",
        "from lib.util import lib_call\n\n\ndef main():\n    return lib_call()\n",
    );
    repo.write("lib/util.py", "def lib_call():\n    return 41 + 1\n");
    repo.write("lib/more.py", "def more():\n    return 2\n");
    repo.commit("app and lib");
    for sparse in [
        &["sparse-checkout", "set", "app"][..],
        &["sparse-checkout", "set", "--sparse-index", "app"],
    ] {
        repo.git(sparse);
        assert!(
            !repo.path().join("lib/util.py").exists(),
            "git left lib/ out"
        );
        assert_eq!(
            repo.git(&["status", "--porcelain"]),
            "",
            "git sees no change"
        );
        repo.sno_json(&["init", "--json"]);
        let package = stdout(&repo.sno(&["search", "lib_call"]));
        assert!(package.contains("lib_call"), "{package}");
        assert!(!package.contains("changed on disk"), "{package}");
        let shown = repo.sno(&["show", "lib_call"]);
        assert!(shown.status.success(), "{}", stderr(&shown));
        assert!(stdout(&shown).contains("41 + 1"), "{}", stdout(&shown));
        assert!(
            !stderr(&shown).contains("changed on disk"),
            "{}",
            stderr(&shown)
        );
    }
    // A file of the sparse set that is deleted is still an edit.
    repo.remove("app/main.py");
    let package = stdout(&repo.sno(&["search", "main lib_call"]));
    assert!(package.contains("changed on disk"), "{package}");
}
