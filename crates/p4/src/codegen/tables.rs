//! Tables and counters: the maps of docs/p4.md ("Maps of a compiled program"), key building, lookup, default
//! actions, const entries, and the dispatch to the action found.

use super::ctypes::{c_bits, ident};
use super::repr::loc_of;
use super::Gen;
use crate::diag::Diagnostic;
use crate::ir::{ActionId, CounterId, Expr, KeysetElem, Storage, Table, TableId};
use std::fmt::Write;

impl Gen<'_> {
    /// Bytes of an action's parameters in a map value.
    fn params_bytes(&self, action: ActionId) -> u32 {
        self.p.control.actions[action]
            .params
            .iter()
            .map(|p| {
                self.p.locals[*p]
                    .ty
                    .scalar_width(self.p)
                    .unwrap_or(0)
                    .div_ceil(8)
            })
            .sum()
    }

    /// The largest parameter block among a table's actions.
    fn value_bytes(&self, table: &Table) -> u32 {
        let mut all = table.actions.clone();
        all.push(table.default_action.0);
        all.iter().map(|a| self.params_bytes(*a)).max().unwrap_or(0)
    }

    /// The number an action has in a table's map values: its position in `actions` (the default action, if not
    /// listed, comes after them).
    pub fn action_pos(&self, table: TableId, action: ActionId) -> usize {
        let t = &self.p.control.tables[table];
        t.actions
            .iter()
            .position(|a| *a == action)
            .unwrap_or(t.actions.len())
    }

    /// The map and struct definitions of every table and counter.
    pub fn map_defs(&mut self) -> Result<String, Diagnostic> {
        let mut out = String::new();
        for (id, table) in self.p.control.tables.iter().enumerate() {
            let (_, n) = table.key_layout();
            let m = self.value_bytes(table);
            let name = ident(&table.name);
            let _ = writeln!(
                out,
                "struct t{id}_key {{ {}u8 b[{}]; }} __attribute__((packed));",
                if table.storage() == Storage::Lpm {
                    "u32 prefixlen; "
                } else {
                    ""
                },
                n.max(1)
            );
            let _ = writeln!(
                out,
                "struct t{id}_value {{ u32 action; u8 b[{m}]; }} __attribute__((packed));"
            );
            let _ = writeln!(out, "struct t{id}_defval {{ u32 set; u32 action; u8 b[{m}]; }} __attribute__((packed));");
            let map = |kind: &str, key: &str, value: &str, size: u32, flags: &str, name: &str| {
                format!(
                    "struct {{\n    __uint(type, {kind});\n    __uint(max_entries, {size});\n    __type(key, {key});\n    __type(value, {value});\n{flags}}} {name} SEC(\".maps\");\n"
                )
            };
            let size = table.size.max(1);
            match table.storage() {
                Storage::Keyless | Storage::Const => {}
                Storage::Hash => {
                    out += &map(
                        "BPF_MAP_TYPE_HASH",
                        &format!("struct t{id}_key"),
                        &format!("struct t{id}_value"),
                        size,
                        "",
                        &name,
                    )
                }
                Storage::Array => {
                    out += &map(
                        "BPF_MAP_TYPE_ARRAY",
                        "u32",
                        &format!("struct t{id}_value"),
                        size,
                        "",
                        &name,
                    )
                }
                Storage::Lpm => {
                    out += &map(
                        "BPF_MAP_TYPE_LPM_TRIE",
                        &format!("struct t{id}_key"),
                        &format!("struct t{id}_value"),
                        size,
                        "    __uint(map_flags, BPF_F_NO_PREALLOC);\n",
                        &name,
                    )
                }
                Storage::Ternary => {
                    let _ = writeln!(out, "struct t{id}_slot {{ u32 rank; u8 key[{n}]; u8 mask[{n}]; u32 action; u8 b[{m}]; }} __attribute__((packed));");
                    out += &map(
                        "BPF_MAP_TYPE_ARRAY",
                        "u32",
                        &format!("struct t{id}_slot"),
                        size,
                        "",
                        &name,
                    );
                }
            }
            out += &map(
                "BPF_MAP_TYPE_ARRAY",
                "u32",
                &format!("struct t{id}_defval"),
                1,
                "",
                &format!("{name}_defact"),
            );
        }
        for (id, vs) in self.p.parser.value_sets.iter().enumerate() {
            let taken = self.p.control.tables.iter().any(|t| t.name == vs.name)
                || self.p.control.counters.iter().any(|c| c.name == vs.name);
            if taken {
                return Err(self.error(
                    vs.span,
                    format!("value_set `{}` has the name of a table or counter: both would be the map `{}`", vs.name, vs.name),
                ));
            }
            let _ = writeln!(
                out,
                "struct vs{id}_key {{ u8 b[{}]; }} __attribute__((packed));\nstruct {{\n    __uint(type, BPF_MAP_TYPE_HASH);\n    __uint(max_entries, {});\n    __type(key, struct vs{id}_key);\n    __type(value, u32);\n}} {} SEC(\".maps\");",
                vs.key_bytes().max(1),
                vs.size,
                ident(&vs.name)
            );
        }
        for c in &self.p.control.counters {
            let kind = if c.sparse {
                "BPF_MAP_TYPE_HASH"
            } else {
                "BPF_MAP_TYPE_ARRAY"
            };
            let _ = writeln!(
                out,
                "struct {{\n    __uint(type, {kind});\n    __uint(max_entries, {});\n    __type(key, u32);\n    __type(value, u32);\n}} {} SEC(\".maps\");",
                c.size.max(1),
                ident(&c.name)
            );
        }
        Ok(out)
    }

    /// Code that looks the table up, picks the action (entry, control-plane default, or the program's default) and
    /// runs it.
    pub fn apply_table(&mut self, id: TableId) -> Result<(), Diagnostic> {
        let table = self.p.control.tables[id].clone();
        let name = ident(&table.name);
        let (layout, n) = table.key_layout();
        let m = self.value_bytes(&table);
        let kind = table.storage();
        let copy_from = |v: &str| {
            if m == 0 {
                String::new()
            } else {
                format!("__builtin_memcpy(pb, {v}->b, {m});")
            }
        };
        let (copy, copy_s, copy_d) = (copy_from("v"), copy_from("s"), copy_from("d"));
        self.line(&format!("{{ /* apply {} */", table.name));
        self.line(&format!(
            "struct t{id}_key k; __builtin_memset(&k, 0, sizeof(k));"
        ));
        for (i, off) in &layout {
            self.key_bytes(
                &table.keys[*i].expr,
                table.keys[*i].width,
                &format!("k.b + {off}"),
            )?;
        }
        if kind == Storage::Lpm {
            self.line(&format!("k.prefixlen = {};", 8 * n));
        }
        self.line(&format!(
            "u8 pb[{}]; __builtin_memset(pb, 0, sizeof(pb));",
            m.max(1)
        ));
        self.line(&format!("t{id}_hit = 0;"));
        match kind {
            Storage::Keyless => {}
            Storage::Const => self.const_entries(id, &table, &layout)?,
            Storage::Hash | Storage::Lpm => {
                self.line(&format!(
                    "struct t{id}_value *v = bpf_map_lookup_elem(&{name}, &k);"
                ));
                self.line(&format!(
                    "if (v) {{ t{id}_hit = 1; t{id}_act = v->action; {copy} }}"
                ));
            }
            Storage::Array => {
                let key = &table.keys[0];
                let idx = self.number(&key.expr)?;
                self.line(&format!("u32 idx = (u32)({idx});"));
                self.line(&format!(
                    "struct t{id}_value *v = bpf_map_lookup_elem(&{name}, &idx);"
                ));
                self.line(&format!(
                    "if (v) {{ t{id}_hit = 1; t{id}_act = v->action; {copy} }}"
                ));
            }
            Storage::Ternary => self.ternary_scan(id, &name, n, table.size.max(1), &copy_s),
        }
        let (def, def_args) = table.default_action.clone();
        self.line(&format!("if (!t{id}_hit) {{"));
        self.line(&format!(
            "u32 zero = 0; struct t{id}_defval *d = bpf_map_lookup_elem(&{name}_defact, &zero);"
        ));
        self.line(&format!(
            "if (d && d->set) {{ t{id}_act = d->action; {copy_d} }} else {{"
        ));
        self.line(&format!("t{id}_act = {};", self.action_pos(id, def)));
        self.const_params(def, &def_args);
        self.line("}");
        self.line("}");
        self.line(&format!("switch (t{id}_act) {{"));
        let mut actions = table.actions.clone();
        if !actions.contains(&def) {
            actions.push(def);
        }
        for a in actions {
            self.line(&format!("case {}: {{", self.action_pos(id, a)));
            self.params_from_bytes(a);
            let bound = table.bindings.iter().find(|b| b.0 == a).cloned();
            if let Some((_, copy_in, _)) = &bound {
                self.stmts(copy_in)?;
            }
            self.action_body(a)?;
            if let Some((_, _, copy_out)) = &bound {
                self.stmts(copy_out)?;
            }
            self.line("} break;");
        }
        self.line("}");
        self.line("}");
        Ok(())
    }

    /// The ternary lookup in two scans over the slots: the first finds the best rank among the matching slots, the
    /// second fetches the slot with that rank. Keeping the first loop's state to one number lets the verifier merge
    /// its iterations; a single loop carrying the chosen action and parameters grew with every slot.
    fn ternary_scan(&mut self, id: TableId, name: &str, n: u32, size: u32, copy_s: &str) {
        let diff: Vec<String> = (0..n)
            .map(|j| format!("((k.b[{j}] ^ s->key[{j}]) & s->mask[{j}])"))
            .collect();
        let diff = diff.join(" | ");
        let lookup =
            format!("u32 slot = i; struct t{id}_slot *s = bpf_map_lookup_elem(&{name}, &slot);");
        self.line("u32 best = 0;");
        self.line(&format!("for (u32 i = 0; i < {size}; i++) {{"));
        self.line(&lookup);
        self.line("if (!s || s->rank == 0) break;");
        self.line(&format!(
            "if (({diff}) == 0 && s->rank > best) best = s->rank;"
        ));
        self.line("}");
        self.line(&format!("for (u32 i = 0; best && i < {size}; i++) {{"));
        self.line(&lookup);
        self.line("if (!s || s->rank == 0) break;");
        self.line(&format!("if (s->rank != best || ({diff}) != 0) continue;"));
        self.line(&format!("t{id}_hit = 1; t{id}_act = s->action; {copy_s}"));
        self.line("break;");
        self.line("}");
    }

    /// Stores a key value as big-endian bytes at `dst`.
    pub(super) fn key_bytes(&mut self, e: &Expr, width: u32, dst: &str) -> Result<(), Diagnostic> {
        let n = width.div_ceil(8);
        if let Some(loc) = loc_of(self.p, e) {
            if self.reprs.is_raw(loc) {
                let place = self.place(e)?;
                self.line(&format!("__builtin_memcpy({dst}, &{place}, {n});"));
                return Ok(());
            }
        }
        let v = self.number(e)?;
        let bits = c_bits(width);
        if n == 1 {
            self.line(&format!("*({dst}) = (u8)({v});"));
        } else {
            self.line(&format!("{{ u{bits} t_ = hwxdp_hton{bits}((u{bits})({v}), {n}); __builtin_memcpy({dst}, &t_, {n}); }}"));
        }
        Ok(())
    }

    /// `pb` filled with constant action arguments.
    fn const_params(&mut self, action: ActionId, args: &[u128]) {
        let mut off = 0;
        let params = self.p.control.actions[action].params.clone();
        for (p, v) in params.iter().zip(args) {
            let n = self.p.locals[*p]
                .ty
                .scalar_width(self.p)
                .unwrap_or(0)
                .div_ceil(8);
            for j in 0..n {
                let byte = (v >> (8 * (n - 1 - j))) & 0xff;
                self.line(&format!("pb[{}] = 0x{byte:02x};", off + j));
            }
            off += n;
        }
    }

    /// The action's parameters read from `pb`.
    fn params_from_bytes(&mut self, action: ActionId) {
        let mut off = 0;
        let params = self.p.control.actions[action].params.clone();
        for p in params {
            let ty = self.p.locals[p].ty.clone();
            let w = ty.scalar_width(self.p).unwrap_or(0);
            let n = w.div_ceil(8);
            let bits = c_bits(w);
            let name = self.local_name(p);
            let raw = self.reprs.is_raw(super::repr::Loc::Local(p));
            let line = if n == 1 {
                format!("{name} = pb[{off}];")
            } else if raw {
                format!("{name} = 0; __builtin_memcpy(&{name}, pb + {off}, {n});")
            } else {
                let v = format!("hwxdp_ntoh{bits}(({{ u{bits} t_ = 0; __builtin_memcpy(&t_, pb + {off}, {n}); t_; }}), {n})");
                format!("{name} = {};", self.wrap(&v, &ty))
            };
            self.line(&line);
            off += n;
        }
    }

    fn const_entries(
        &mut self,
        id: TableId,
        table: &Table,
        layout: &[(usize, u32)],
    ) -> Result<(), Diagnostic> {
        let mut first = true;
        for entry in &table.entries {
            let mut conds = Vec::new();
            for (i, off) in layout {
                let w = table.keys[*i].width;
                let n = w.div_ceil(8);
                let (value, mask) = match &entry.keys[*i] {
                    KeysetElem::Any => continue,
                    KeysetElem::Value(v) => (*v, super::ctypes::mask(w)),
                    KeysetElem::Mask { value, mask } => (*value, *mask),
                    KeysetElem::Range { .. } => {
                        return Err(self.error(
                            table.span,
                            "unsupported construct: a range in a table entry",
                        ))
                    }
                };
                for j in 0..n {
                    let s = 8 * (n - 1 - j);
                    let (vb, mb) = ((value >> s) & 0xff, (mask >> s) & 0xff);
                    if mb != 0 {
                        conds.push(format!(
                            "(k.b[{}] & 0x{mb:02x}) == 0x{:02x}",
                            off + j,
                            vb & mb
                        ));
                    }
                }
            }
            let cond = if conds.is_empty() {
                "1".to_string()
            } else {
                conds.join(" && ")
            };
            self.line(&format!(
                "{}if ({cond}) {{",
                if first { "" } else { "else " }
            ));
            first = false;
            self.line(&format!(
                "t{id}_hit = 1; t{id}_act = {};",
                self.action_pos(id, entry.action)
            ));
            self.const_params(entry.action, &entry.args);
            self.line("}");
        }
        Ok(())
    }

    /// `counter.increment(index)` or `counter.add(index, amount)`.
    pub fn count(
        &mut self,
        counter: CounterId,
        index: &Expr,
        amount: Option<&Expr>,
    ) -> Result<(), Diagnostic> {
        let c = self.p.control.counters[counter].clone();
        let name = ident(&c.name);
        let idx = self.number(index)?;
        let amt = match amount {
            Some(a) => self.number(a)?,
            None => "1".into(),
        };
        self.line(&format!(
            "{{ u32 ci_ = (u32)({idx}); u32 ca_ = (u32)({amt});"
        ));
        self.line(&format!("u32 *cv_ = bpf_map_lookup_elem(&{name}, &ci_);"));
        if c.sparse {
            self.line(&format!("if (cv_) __sync_fetch_and_add(cv_, ca_); else bpf_map_update_elem(&{name}, &ci_, &ca_, BPF_NOEXIST);"));
        } else {
            self.line("if (cv_) __sync_fetch_and_add(cv_, ca_);");
        }
        self.line("}");
        Ok(())
    }
}
