// The similarity engine of ./workbook grade (tools/scalebook/grading/similarity.py runs it).
//
// Each exercise's files are parsed by tree-sitter's C++ grammar, normalised (below) into the token
// stream Dolos's own tokenizer makes (an opening token, the syntax node's type, its children, a
// closing token), and compared with Dolos's fingerprint index (@dodona/dolos-core: winnowed
// k-grams of tokens, the pairs that share them, their similarity and the fragments they form).
// What a student cannot help sharing is left out of every file first:
//   - comments, #include lines, the namespace around the code, layout;
//   - every name the file declares (its variables, parameters, functions, types: a copier renames
//     them) and every name the contract and lib's headers declare (every student's), which leaves
//     only the names of the standard library and Eigen (std::exp, .rowwise(), maxCoeff...);
//   - the signature of each contract function (and, with "drop_checks", the checks the contract
//     prescribes: a call given the function's name, require_nonempty("masked_softmax", ...), and an
//     if whose body ends by throwing; measured, leaving them out cost more than it gained: see
//     ./workbook measure-similarity);
//   - each statement that is also one of the released stub's (the stub is also Dolos's "ignored
//     file": a k-gram of the stub counts in no file);
//   - braces around a single statement, const/constexpr/static, attributes, which type a
//     declaration names (every type is one token), how a name is qualified (std::max or max).
// Kept: the shape of the code, its operators, numbers and library calls.
// And what a copier adds to hide a copy is left out too, as a compiler's dead-code pass would:
//   - statements that do nothing (an expression with no assignment, call or increment: (void)x;,
//     x;, 0;, x = x;, empty statements), anything after return, throw, break or continue in its block;
//   - faint locals: variables whose values reach nothing but writes to themselves or to other
//     faint variables (declared, assigned, incremented, never used), with every statement that
//     writes them; then loops and ifs left with an empty body;
//   - branches under a constant condition (if (false), while (0), do ... while (false): the body
//     that runs, once).
// And a for loop and the while loop it can be written as are one loop (its initialiser, "loop",
// the condition, the body, the step last). Renaming, reordering functions or statements, rewriting
// loops and padding with dead statements therefore leave the copied k-grams in place.
//
// Input (standard input, JSON): a list of jobs, each
//   {"id": ANY, "files": {NAME: TEXT}, "old": {NAME: TEXT}, "stub": TEXT, "functions": [NAME],
//    "contract": [HEADER TEXT], "kgram": K, "window": W, "threshold": PERCENT, "min_kgrams": N,
//    "normalise": true, "lexical": true, "drop_checks": false, "fragments": N}
// "old" files (reference folders) are compared with "files" only, never with each other;
// "functions" are the exercise's contract functions, "contract" the texts of the contract's and
// lib's headers. normalise false: Dolos's own tokens, nothing left out but comments (for the
// measurement); lexical false: no names, operators or numbers kept (likewise).
// Output (standard output, JSON): per job {"id", "files": {NAME: {"tokens", "kgrams"}},
//   "pairs": [{"a", "b", "similarity", "a_shared", "b_shared", "longest", "fragments": [[a_first,
//   a_last, b_first, b_last, kgrams]]}]}: every pair whose Dolos similarity (the k-grams of both
//   files found in the other, over all their k-grams) is at least THRESHOLD percent and in which
//   each file has at least MIN_KGRAMS k-grams in the other; a's k-grams found in b (a_shared) and
//   b's in a (b_shared); most similar first, the first N with their fragments (in lines counted from
//   1, longest first).
// Exit status 2 and a message on standard error on bad input.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const engineDir = process.env.SCALEBOOK_SIMILARITY_MODULES;
if (!engineDir) {
  process.stderr.write("compare.mjs: SCALEBOOK_SIMILARITY_MODULES (the folder of node_modules) is not set\n");
  process.exit(2);
}
const require = createRequire(join(engineDir, "package.json"));
const Parser = require("tree-sitter");
const Cpp = require("tree-sitter-cpp");
const { File, FingerprintIndex, TokenizedFile, Region } = await import(
  pathToFileURL(require.resolve("@dodona/dolos-core")).href);

const parser = new Parser();
parser.setLanguage(Cpp);

const SKIPPED = new Set(["comment", "preproc_include", "type_qualifier", "storage_class_specifier",
  "attribute_declaration", "attribute_specifier", "virtual_specifier"]);
const TRANSPARENT = new Set(["translation_unit", "declaration_list",
  "compound_statement", "parenthesized_expression", "condition_clause"]);
const TYPES = new Set(["primitive_type", "type_identifier", "sized_type_specifier", "placeholder_type_specifier",
  "template_type", "type_descriptor", "auto", "decltype"]);
const NAMES = new Set(["qualified_identifier", "template_function", "scoped_identifier"]);
const EFFECTS = new Set(["assignment_expression", "update_expression", "call_expression", "new_expression",
  "delete_expression", "throw_expression", "co_await_expression", "co_yield_expression"]);
const PURE_CASTS = new Set(["static_cast", "const_cast", "reinterpret_cast", "dynamic_cast"]);
const JUMPS = new Set(["return_statement", "break_statement", "continue_statement", "goto_statement",
  "throw_statement"]);
const LOOPS = new Set(["for_statement", "while_statement", "for_range_loop"]);

function parse(text) {
  return parser.parse(text, undefined, { bufferSize: Math.max(32 * 1024, text.length * 2) });
}

function collapsed(text) {
  return text.replace(/\[\[\s*maybe_unused\s*\]\]/g, "").replace(/\s+/g, " ").trim();
}

// The constant value of a condition made of a literal (true, false, 0, 1, nullptr...), or null.
function constant(node) {
  if (!node) return null;
  if (node.type === "condition_clause" || node.type === "parenthesized_expression") {
    const inner = node.namedChildren.filter(c => c.type !== "comment");
    return inner.length === 1 ? constant(inner[0]) : null;
  }
  if (node.type === "true") return true;
  if (node.type === "false" || node.type === "null" || node.type === "nullptr") return false;
  if (node.type === "number_literal") return !/^[0.]*[uUlLfF]*$/.test(node.text);
  if (node.type === "unary_expression" && node.child(0)?.type === "!") {
    const inner = constant(node.namedChildren[0]);
    return inner === null ? null : !inner;
  }
  return null;
}

function descendants(node, out = []) {
  for (const child of node.namedChildren) {
    out.push(child);
    descendants(child, out);
  }
  return out;
}

// An expression with an effect: an assignment, increment, call (a cast is no call), new, delete, throw.
function hasEffect(node) {
  for (const n of [node, ...descendants(node)]) {
    if (!EFFECTS.has(n.type)) continue;
    if (n.type === "call_expression") {
      const callee = n.childForFieldName("function");
      const name = callee?.type === "template_function" ? callee.childForFieldName("name")?.text : null;
      if (PURE_CASTS.has(name)) continue;
    }
    if (n.type === "assignment_expression") {
      const left = n.childForFieldName("left"), right = n.childForFieldName("right");
      if (left && right && left.text.replace(/\s+/g, "") === right.text.replace(/\s+/g, "")
          && n.child(1)?.type === "=" && !hasEffect(right)) continue;  // x = x;
    }
    return true;
  }
  return false;
}

// The variable an assignment's or increment's target is rooted in: w(i, j) = ..., w[i] = ..., w = ...
function targetRoot(node) {
  while (node && ["subscript_expression", "call_expression", "field_expression", "pointer_expression",
    "parenthesized_expression"].includes(node.type)) {
    node = node.type === "call_expression" ? node.childForFieldName("function")
      : node.type === "subscript_expression" ? node.childForFieldName("argument")
        : node.type === "field_expression" ? node.childForFieldName("argument")
          : node.namedChildren[0];
  }
  return node && node.type === "identifier" ? node : null;
}

// Locals of a body: name -> their declaration nodes, for plain (non-reference, non-pointer) declarators.
function locals(body) {
  const found = new Map();
  for (const node of descendants(body)) {
    if (node.type !== "declaration") continue;
    for (const declarator of node.childrenForFieldName("declarator")) {
      const inner = declarator.type === "init_declarator" ? declarator.childForFieldName("declarator") : declarator;
      if (inner && inner.type === "identifier") {
        if (!found.has(inner.text)) found.set(inner.text, []);
        found.get(inner.text).push(node);
      }
    }
  }
  return found;
}

function isInside(node, removed) {
  for (let n = node; n; n = n.parent) if (removed.has(n.id)) return true;
  return false;
}

// The local a statement writes and nothing else: x = ...; x += ...; ++x; w(i, j) = ...; (or null).
function writtenLocal(statement) {
  const expression = statement.namedChildren.find(c => c.type !== "comment");
  if (!expression) return null;
  const target = expression.type === "assignment_expression" ? expression.childForFieldName("left")
    : expression.type === "update_expression" ? expression.childForFieldName("argument") : null;
  const root = targetRoot(target);
  return root ? root.text : null;
}

// Where the value read at IDENTIFIER goes: the local a declaration initialises or a statement writes
// (a name of VARIABLES), or null (anything else: a call, a condition, a return...).
function feeds(identifier, variables) {
  for (let node = identifier.parent; node; node = node.parent) {
    if (node.type === "init_declarator") {
      const declared = node.childForFieldName("declarator");
      return declared?.type === "identifier" && variables.has(declared.text) ? declared.text : null;
    }
    if (node.type === "expression_statement") {
      const written = writtenLocal(node);
      return written && variables.has(written) ? written : null;
    }
    if (node.type.endsWith("_statement") || node.type === "declaration" || node.type === "lambda_expression") return null;
  }
  return null;
}

// The checks a contract prescribes, in the contract's words, as every careful solution writes them:
// a call given the contract function's name (require_nonempty("masked_softmax", ...), or a local
// holding that name), and an if whose body ends by throwing (no else): the error paths.
function contractChecks(body, functions, removed) {
  const names = new Set();
  for (const node of descendants(body)) {
    if (node.type !== "init_declarator") continue;
    const value = node.childForFieldName("value");
    const declared = node.childForFieldName("declarator");
    const inner = declared?.type === "pointer_declarator" ? declared.childForFieldName("declarator") : declared;
    if (value?.type === "string_literal" && functions.has(literal(value)) && inner?.type === "identifier") {
      names.add(inner.text);
    }
  }
  for (const node of descendants(body)) {
    if (node.type === "expression_statement") {
      const call = node.namedChildren.find(c => c.type !== "comment");
      const first = call?.type === "call_expression" ? call.childForFieldName("arguments")?.namedChildren[0] : null;
      if (first && ((first.type === "string_literal" && functions.has(literal(first)))
          || (first.type === "identifier" && names.has(first.text)))) removed.add(node.id);
    }
    if (node.type === "if_statement" && !node.childForFieldName("alternative")) {
      const consequence = node.childForFieldName("consequence");
      const statements = consequence?.type === "compound_statement"
        ? consequence.namedChildren.filter(c => c.type !== "comment" && !removed.has(c.id)) : [consequence];
      const last = statements[statements.length - 1];
      if (last?.type === "throw_statement") removed.add(node.id);  // (what follows a throw is removed first)
    }
  }
}

function literal(node) {
  return node.namedChildren.filter(c => c.type === "string_content").map(c => c.text).join("");
}

function statementsOf(body) {
  return descendants(body).filter(n => n.type.endsWith("_statement") || n.type === "declaration");
}

// The statements of BODY (a function's compound statement) that do nothing by themselves, added to
// REMOVED: no effect, a loop that never runs, anything after a jump in its block.
function deadStatements(body, removed) {
  for (const statement of statementsOf(body)) {
    if (statement.type === "expression_statement") {
      const expression = statement.namedChildren.find(c => c.type !== "comment");
      if (!expression || !hasEffect(expression)) removed.add(statement.id);
    }
    if ((statement.type === "while_statement" || statement.type === "for_statement")
        && constant(statement.childForFieldName("condition")) === false) removed.add(statement.id);
    if (statement.type === "compound_statement") {
      let jumped = false;
      for (const child of statement.namedChildren) {
        if (jumped && child.type !== "comment" && !child.type.endsWith("label")) removed.add(child.id);
        if (JUMPS.has(child.type)) jumped = true;
      }
    }
  }
}

// Faint locals of BODY: a local whose value reaches nothing but writes to itself or to other faint
// locals (int pad = 1; pad += pad * 2; ...). Every plain local starts faint; one read anywhere else,
// or feeding a local that is not faint, makes it live; until nothing changes. Their declarations and
// writes are added to REMOVED, and so are the loops and ifs that are then left empty.
function faintLocals(body, removed) {
  const statements = statementsOf(body);
  const variables = locals(body);
  const sinks = new Map();  // name -> the locals its reads feed (null: something else)
  for (const identifier of descendants(body)) {
    if (identifier.type !== "identifier" || !variables.has(identifier.text) || isInside(identifier, removed)) continue;
    const parent = identifier.parent;
    if (parent.type === "init_declarator" && parent.childForFieldName("declarator")?.id === identifier.id) continue;
    if (parent.type === "update_expression" && parent.parent?.type === "for_statement"
        && parent.parent.childForFieldName("update")?.id === parent.id) continue;
    if (!sinks.has(identifier.text)) sinks.set(identifier.text, new Set());
    sinks.get(identifier.text).add(feeds(identifier, variables));
  }
  const faint = new Set([...variables.keys()]);
  for (let changed = true; changed;) {
    changed = false;
    for (const name of [...faint]) {
      for (const sink of sinks.get(name) || []) {
        if (sink === null || !faint.has(sink)) { faint.delete(name); changed = true; break; }
      }
    }
  }
  for (const name of faint) variables.get(name).forEach(d => removed.add(d.id));
  for (const statement of statements) {
    const written = statement.type === "expression_statement" ? writtenLocal(statement) : null;
    if (written && faint.has(written)) removed.add(statement.id);
  }
  for (let changed = true; changed;) {
    changed = false;
    // Loops and ifs whose body is now empty: a loop over its own counter, or an if, does nothing.
    for (const statement of statements) {
      if (removed.has(statement.id)) continue;
      const bodyOf = LOOPS.has(statement.type) ? statement.childForFieldName("body")
        : statement.type === "if_statement" && !statement.childForFieldName("alternative")
          ? statement.childForFieldName("consequence") : null;
      if (!bodyOf || !empty(bodyOf, removed)) continue;
      const init = statement.childForFieldName("initializer");
      if (statement.type === "for_statement" && init && init.type !== "declaration") continue;
      if (statement.type === "while_statement") continue;
      const condition = statement.childForFieldName("condition");
      if (condition && hasEffect(condition)) continue;
      removed.add(statement.id);
      changed = true;
    }
  }
}

function empty(node, removed) {
  if (removed.has(node.id)) return true;
  if (node.type === "compound_statement") return node.namedChildren.every(c => c.type === "comment" || empty(c, removed));
  return node.type === "expression_statement" && node.namedChildren.length === 0;
}

function functionName(definition) {
  let declarator = definition.childForFieldName("declarator");
  while (declarator && declarator.type !== "function_declarator") declarator = declarator.childForFieldName("declarator");
  const name = declarator?.childForFieldName("declarator");
  if (!name) return null;
  return name.type === "qualified_identifier" ? name.childForFieldName("name")?.text ?? name.text : name.text;
}

// The names a text declares: functions, members, enumerators, types, aliases, variables, parameters
// (what a contract header gives every student, or a file's own names, which a copier renames).
function declaredNames(root) {
  const found = new Set();
  const add = (node) => {
    if (!node) return;
    if (["identifier", "field_identifier", "type_identifier", "namespace_identifier"].includes(node.type)) found.add(node.text);
    else if (node.type === "qualified_identifier") add(node.childForFieldName("name"));
    else if (node.type === "template_function" || node.type === "template_type") add(node.childForFieldName("name"));
    else if (["init_declarator", "function_declarator", "reference_declarator", "pointer_declarator", "array_declarator",
      "parenthesized_declarator", "optional_parameter_declaration", "variadic_declarator"].includes(node.type)) {
      add(node.childForFieldName("declarator") || node.namedChildren.find(c => c.type !== "comment"));
    } else if (node.type === "structured_binding_declarator") node.namedChildren.forEach(add);
  };
  for (const node of descendants(root)) {
    switch (node.type) {
      case "function_declarator": case "init_declarator": case "field_declaration": case "declaration":
      case "parameter_declaration": case "optional_parameter_declaration": case "type_definition":
      case "for_range_loop":
        for (const d of node.childrenForFieldName("declarator")) add(d);
        break;
      case "enumerator": case "alias_declaration": case "struct_specifier": case "class_specifier":
      case "enum_specifier": case "union_specifier": case "concept_definition":
        add(node.childForFieldName("name"));
        break;
      case "using_declaration":
        add(node.namedChildren[node.namedChildren.length - 1]);
        break;
      case "lambda_capture_specifier":
        node.namedChildren.forEach(add);
        break;
      default:
        break;
    }
  }
  return found;
}

const contractCache = new Map();
function contractNames(texts) {
  const key = texts.join("\0");
  if (!contractCache.has(key)) {
    const names = new Set();
    for (const text of texts) declaredNames(parse(text).rootNode).forEach(n => names.add(n));
    contractCache.set(key, names);
  }
  return contractCache.get(key);
}

function numberValue(text) {
  const value = Number(text.replace(/['_]/g, "").replace(/[uUlLfF]+$/, ""));
  return Number.isFinite(value) ? String(value) : text;
}

const OPERATED = new Set(["binary_expression", "assignment_expression", "update_expression", "unary_expression"]);

// Dolos's token stream of TEXT (opening token, node type, children, closing token, each mapped to
// the node's region), with the normalisations above when NORMALISE.
function tokenize(text, { normalise, functions, stubStatements, keepChecks, lexical, given }) {
  const tree = parse(text);
  // Names a copier keeps: what is neither declared in the file (renamed at will) nor by the contract
  // and lib (every student's): the standard library's and Eigen's functions, members and constants.
  const own = lexical ? declaredNames(tree.rootNode) : new Set();
  const kept = (node) => lexical && node && !own.has(node.text) && !given.has(node.text) && !functions.has(node.text);
  const nameOf = (node) => {
    if (!node) return null;
    if (node.type === "qualified_identifier" || node.type === "template_function" || node.type === "template_type") {
      return nameOf(node.childForFieldName("name"));
    }
    return ["identifier", "field_identifier", "type_identifier"].includes(node.type) ? node : null;
  };
  const removed = new Set();
  const tokens = [], mapping = [];
  // As Dolos's tokenizer: a node's tokens map to its region up to where its first child starts.
  const regionOf = (node) => {
    const first = node.namedChildren.find(c => !removed.has(c.id) && c.type !== "comment");
    const end = first ? first.startPosition : node.endPosition;
    return new Region(node.startPosition.row, node.startPosition.column, end.row, end.column);
  };
  const wholeRegion = (node) => new Region(node.startPosition.row, node.startPosition.column,
    node.endPosition.row, node.endPosition.column);
  let moved = null;  // the region every token gets while a for loop's step is emitted after its body
  const push = (token, node, region = regionOf(node)) => {
    tokens.push(token);
    mapping.push(moved || region);
  };
  if (normalise) {
    for (const node of descendants(tree.rootNode)) {
      if (node.type === "function_definition" || node.type === "lambda_expression") {
        const body = node.childForFieldName("body");
        if (body) deadStatements(body, removed);
        if (body && !keepChecks) contractChecks(body, functions, removed);
        if (body) faintLocals(body, removed);
      }
      if ((node.type.endsWith("_statement") || node.type === "declaration" || node.type === "function_definition")
          && stubStatements.has(collapsed(node.text))) removed.add(node.id);
    }
  }
  // An expression where a statement would be (a for loop's initialiser or step): as that statement.
  const asStatement = (node) => {
    if (node.type === "declaration" || removed.has(node.id)) { visit(node); return; }
    const region = regionOf(node);
    push("(", node, region);
    push("expression_statement", node, region);
    visit(node);
    push(")", node, region);
  };
  const visit = (node) => {
    if (removed.has(node.id)) return;
    if (node.type === "comment") return;
    if (normalise) {
      if (SKIPPED.has(node.type)) return;
      if (node.type === "namespace_definition") { visit(node.childForFieldName("body")); return; }
      if (TRANSPARENT.has(node.type)) { node.namedChildren.forEach(visit); return; }
      if (TYPES.has(node.type)) { push("type", node, wholeRegion(node)); return; }
      if (NAMES.has(node.type)) {
        const name = nameOf(node);
        push(kept(name) ? `identifier ${name.text}` : "identifier", node, wholeRegion(node));
        return;
      }
      if ((node.type === "identifier" || node.type === "field_identifier") && kept(node)) {
        const region = regionOf(node);
        push("(", node, region);
        push(`${node.type} ${node.text}`, node, region);
        push(")", node, region);
        return;
      }
      if (node.type === "function_definition" && functions.has(functionName(node))) {
        const body = node.childForFieldName("body");
        if (body) visit(body);
        return;
      }
      const value = ["if_statement", "do_statement"].includes(node.type)
        ? constant(node.childForFieldName("condition")) : null;
      if (node.type === "if_statement" && value !== null) {
        const branch = value ? node.childForFieldName("consequence") : node.childForFieldName("alternative");
        if (branch) (branch.type === "else_clause" ? branch.namedChildren : [branch]).forEach(visit);
        return;
      }
      if (node.type === "do_statement" && value === false) { visit(node.childForFieldName("body")); return; }
      // for (init; cond; step) body and { init; while (cond) { body step; } } are one loop: its
      // initialiser first, then "loop", the condition, the body and the step as a last statement.
      if (node.type === "for_statement" || node.type === "while_statement") {
        const init = node.childForFieldName("initializer"), step = node.childForFieldName("update");
        if (init) asStatement(init);
        const head = node.childForFieldName("body").startPosition;  // the loop's header, its initialiser too
        const region = new Region(node.startPosition.row, node.startPosition.column, head.row, head.column);
        push("(", node, region);
        push("loop", node, region);
        const condition = node.childForFieldName("condition");
        if (condition) visit(condition);
        const body = node.childForFieldName("body");
        visit(body);
        if (step) {  // at the body's end, where a while loop has it: Dolos keeps a file's tokens in order
          moved = new Region(body.endPosition.row, body.endPosition.column, body.endPosition.row, body.endPosition.column);
          asStatement(step);
          moved = null;
        }
        push(")", node, region);
        return;
      }
      if (node.type === "expression_statement" && node.namedChildren.length === 0) return;
    }
    const region = regionOf(node);
    push("(", node, region);
    const operator = normalise && lexical && OPERATED.has(node.type) ? node.childForFieldName("operator") : null;
    push(operator ? `${node.type} ${operator.type}`
      : normalise && lexical && node.type === "number_literal" ? `number ${numberValue(node.text)}` : node.type,
    node, region);
    node.namedChildren.forEach(visit);
    push(")", node, region);
  };
  visit(tree.rootNode);
  // Dolos asserts that a k-gram's first token starts before its last one ends: a token emitted out
  // of source order (a step moved after its body) has its region stretched to keep that so.
  let latest = null;
  for (let i = 0; i < mapping.length; i++) {
    const r = mapping[i];
    if (latest && (r.endRow < latest.row || (r.endRow === latest.row && r.endCol < latest.column))) {
      mapping[i] = new Region(r.startRow, r.startCol, latest.row, latest.column);
    }
    if (!latest || r.startRow > latest.row || (r.startRow === latest.row && r.startCol > latest.column)) {
      latest = { row: r.startRow, column: r.startCol };
    }
  }
  return { tokens, mapping };
}

function stubStatementsOf(stub) {
  const found = new Set();
  for (const node of descendants(parse(stub).rootNode)) {
    if (node.type.endsWith("_statement") || node.type === "declaration" || node.type === "function_definition") {
      found.add(collapsed(node.text));
    }
  }
  return found;
}

function runJob(job) {
  const normalise = job.normalise !== false;
  const options = { normalise, functions: new Set(job.functions || []), keepChecks: job.drop_checks !== true,
    lexical: normalise && job.lexical !== false, given: contractNames(job.contract || []),
    stubStatements: normalise ? stubStatementsOf(job.stub || "") : new Set() };
  const index = new FingerprintIndex(job.kgram, job.window);
  const entries = [];  // [name, tokenized, old]
  for (const [group, old] of [[job.files || {}, false], [job.old || {}, true]]) {
    for (const [name, text] of Object.entries(group)) {
      const { tokens, mapping } = tokenize(text, options);
      entries.push([name, new TokenizedFile(new File(name, text), tokens, mapping), old]);
    }
  }
  index.addFiles(entries.map(e => e[1]));
  if (job.stub) {
    const { tokens, mapping } = tokenize(job.stub, options);
    index.addIgnoredFile(new TokenizedFile(new File("(stub)", job.stub), tokens, mapping));
  }
  const kgrams = new Map(index.entries().map(entry => [entry.file.id, entry.kgrams.length - entry.ignored.size]));
  const files = {};
  for (const [name, file] of entries) files[name] = { tokens: file.tokens.length, kgrams: kgrams.get(file.id) };
  // Each pair's k-grams found in the other, summed from the index as Dolos's Pair counts them, and
  // its similarity by Pair's formula: Pairs themselves (their longest run, their fragments) are
  // built for the pairs shown only, as a class of 200 alike files has 19,900 pairs an exercise.
  const position = new Map(entries.map((e, i) => [e[1].id, i]));
  const n = entries.length;
  const leftCovered = new Float64Array(n * n);  // [i * n + j], i < j: i's k-grams found in j; [j * n + i]: j's in i
  for (const shared of index.sharedFingerprints()) {
    if (shared.ignored) continue;
    const here = shared.files().filter(f => position.has(f.id)).map(f => [position.get(f.id), shared.occurrencesOf(f).length]);
    for (const [i, countI] of here) {
      for (const [j, countJ] of here) {
        if (i < j) { leftCovered[i * n + j] += countI; leftCovered[j * n + i] += countJ; }
      }
    }
  }
  const pairs = [];
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (entries[i][2] && entries[j][2]) continue;  // two reference files
      const a = leftCovered[i * n + j], b = leftCovered[j * n + i];
      const total = kgrams.get(entries[i][1].id) + kgrams.get(entries[j][1].id);
      if (a + b === 0 || Math.min(a, b) < job.min_kgrams || 100 * (a + b) < job.threshold * total) continue;
      pairs.push({ a: entries[i][0], b: entries[j][0], similarity: total > 0 ? (a + b) / total : 0, a_shared: a,
        b_shared: b, longest: null, fragments: [], files: [entries[i][1], entries[j][1]] });
    }
  }
  // The fragments of the FRAGMENTS most similar pairs only (those the page shows side by side).
  pairs.sort((x, y) => y.similarity - x.similarity || Math.min(y.a_shared, y.b_shared) - Math.min(x.a_shared, x.b_shared));
  for (const entry of pairs.slice(0, job.fragments)) {
    const pair = index.getPair(entry.files[0], entry.files[1]);
    entry.longest = pair.longest;
    entry.fragments = pair.buildFragments().map(f => [f.leftSelection.startRow + 1, f.leftSelection.endRow + 1,
      f.rightSelection.startRow + 1, f.rightSelection.endRow + 1, f.pairs.length]);
    entry.fragments.sort((x, y) => y[4] - x[4] || x[0] - y[0]);
  }
  pairs.forEach(entry => delete entry.files);
  return { id: job.id, files, pairs };
}

let jobs;
try {
  jobs = JSON.parse(readFileSync(0, "utf8"));
  if (!Array.isArray(jobs)) throw new Error("the input is not a list of jobs");
  for (const job of jobs) {
    for (const key of ["kgram", "window", "threshold", "min_kgrams", "fragments"]) {
      if (!Number.isInteger(job[key]) || job[key] < (["kgram", "window"].includes(key) ? 1 : 0)) {
        throw new Error(`job ${JSON.stringify(job.id)}: ${key} must be a whole number, got ${JSON.stringify(job[key])}`);
      }
    }
  }
} catch (error) {
  process.stderr.write(`compare.mjs: ${error.message}\n`);
  process.exit(2);
}
process.stdout.write(JSON.stringify(jobs.map(runJob)));
