// orchestrator's opencode plugin, written by `orch install opencode` (orch:managed). Commit it: it names no path of
// this machine. opencode loads every .opencode/plugin/*.js of the project; this one sends each tool call to
// orchestrator before it runs (tool.execute.before) and after (tool.execute.after), and BLOCKS it (throws: opencode
// hands the model the error's message instead of running the tool) when orchestrator refuses it, or when orchestrator
// cannot be reached at all: fail closed, never "allow" on its own.
//
// One round trip per hook: the workspace daemon's socket (.orchestration/run/orch.sock, about a millisecond); when no
// daemon answers, the committed launcher .orchestration/bin/orch-hook, which finds this machine's interpreter,
// evaluates the call and starts a daemon for the next one (docs/adapters.md, "opencode"). Nothing here throws while
// the plugin loads: opencode skips a plugin whose loading fails, and its calls would then run ungoverned.
import { spawn } from "node:child_process"
import { createConnection } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const AGENT = "opencode"
// <root>/.opencode/plugin/orchestrator.js -> <root>
const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))))
const SOCKET = join(ROOT, ".orchestration", "run", "orch.sock")
const LAUNCHER = join(ROOT, ".orchestration", "bin", "orch-hook")
const CONNECT_MS = 500
// a person may be deciding in `orch tui`: as long as the hook client waits (ORCH_HOOK_TIMEOUT, seconds)
const ANSWER_MS = 1000 * Number(process.env.ORCH_HOOK_TIMEOUT || 600)
// the tool's metadata orchestrator reads after a call (never the tool's text output)
const RESULT_KEYS = ["exit", "exists", "isError"]
// helper agents whose model is not the one that calls tools
const SIDE_AGENTS = new Set(["title", "summary", "compaction"])

const blocked = (why) => new Error(`orchestrator: ${why}; this call is blocked (fail closed)`)

// the wire format of orchestrator/hookclient.py: "ORCH1 <agent>", the ORCH_* variables, an empty line, the event
function request(raw) {
  const lines = [`ORCH1 ${AGENT}`]
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("ORCH_") && !key.includes("=") && typeof value === "string" && !value.includes("\n")) {
      lines.push(`${key}=${value}`)
    }
  }
  return Buffer.concat([Buffer.from(lines.join("\n") + "\n\n"), Buffer.from(raw)])
}

// "<exit> <len stdout> <len stderr>\n" + both bodies; null when malformed
function decode(data) {
  const nl = data.indexOf(10)
  const parts = nl < 0 ? [] : data.subarray(0, nl).toString().split(" ")
  if (parts.length !== 3 || !parts.every((p) => /^\d+$/.test(p))) return null
  const [code, nOut, nErr] = parts.map(Number)
  const body = data.subarray(nl + 1)
  if ((code !== 0 && code !== 2) || body.length !== nOut + nErr) return null
  return { code, out: body.subarray(0, nOut).toString(), err: body.subarray(nOut).toString() }
}

// one request over the daemon socket; null when there is no usable daemon (the launcher answers instead)
function askDaemon(raw) {
  return new Promise((resolve) => {
    const chunks = []
    let done = false
    const finish = (answer) => {
      if (done) return
      done = true
      clearTimeout(timer)
      sock.destroy()
      resolve(answer)
    }
    const sock = createConnection({ path: SOCKET })
    let timer = setTimeout(() => finish(null), CONNECT_MS)
    sock.on("connect", () => {
      clearTimeout(timer)
      timer = setTimeout(() => finish(null), ANSWER_MS)
      sock.end(request(raw))
    })
    sock.on("data", (chunk) => chunks.push(chunk))
    sock.on("end", () => finish(decode(Buffer.concat(chunks))))
    sock.on("error", () => finish(null))
  })
}

// the committed launcher, the event on stdin: it evaluates the call (and starts a daemon for the next ones)
function askLauncher(raw) {
  return new Promise((resolve, reject) => {
    const out = []
    const err = []
    let child
    try {
      child = spawn(LAUNCHER, [AGENT], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] })
    } catch (exc) {
      reject(blocked(`cannot run the hook launcher .orchestration/bin/orch-hook (${exc && exc.message})`))
      return
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), ANSWER_MS)
    child.on("error", (exc) => {
      clearTimeout(timer)
      reject(blocked(`the hook launcher .orchestration/bin/orch-hook is missing or not executable (${exc.code || exc.message}); ` +
        "restore it (git checkout .orchestration/bin/orch-hook, or orch install opencode) and run orch doctor"))
    })
    child.stdout.on("data", (chunk) => out.push(chunk))
    child.stderr.on("data", (chunk) => err.push(chunk))
    child.stdin.on("error", () => {})
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code: signal ? -1 : code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString(),
        signal })
    })
    child.stdin.end(raw)
  })
}

// orchestrator's answer as an object; throws (blocks the call) on a refusal or any failure
async function ask(event) {
  const raw = JSON.stringify(event)
  const answer = (await askDaemon(raw)) || (await askLauncher(raw))
  if (answer.code === 2) throw new Error((answer.err || answer.out).trim() || "orchestrator: call blocked")
  if (answer.code !== 0) {
    const why = answer.signal ? `was killed (${answer.signal})` : `failed (exit ${answer.code})`
    throw blocked(`the hook launcher ${why}: ${(answer.err || answer.out).trim().slice(-600)}`)
  }
  let parsed
  try {
    parsed = JSON.parse(answer.out || "{}")
  } catch {
    throw blocked(`unreadable answer ${JSON.stringify(answer.out.slice(0, 200))}`)
  }
  if (typeof parsed !== "object" || parsed === null) throw blocked("unreadable answer")
  if (typeof parsed.deny === "string") throw new Error(parsed.deny)
  return parsed
}

export const OrchestratorPlugin = async (ctx) => {
  const cwd = (ctx && (ctx.directory || ctx.worktree)) || process.cwd()
  const parents = new Map() // subagent session -> parent session (session.created events)
  const models = new Map() // session -> "<providerID>/<modelID>" of its last chat.params

  const rootOf = (session) => {
    let cur = session
    for (let i = 0; i < 32 && parents.has(cur); i++) cur = parents.get(cur)
    return cur
  }
  const base = (name, input, args) => {
    const root = rootOf(input.sessionID)
    const event = { hook_event_name: name, tool: input.tool, sessionID: root, callID: input.callID, args, cwd }
    if (root !== input.sessionID) event.subagent = input.sessionID
    const model = models.get(input.sessionID) || models.get(root)
    if (model) event.model = model
    return event
  }

  return {
    event: async ({ event }) => {
      const info = event && event.type === "session.created" && event.properties && event.properties.info
      if (info && info.id && info.parentID) parents.set(info.id, info.parentID)
    },
    "chat.params": async (input) => {
      const model = input && input.model
      if (model && model.id && !SIDE_AGENTS.has(input.agent)) models.set(input.sessionID, `${model.providerID}/${model.id}`)
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input || !input.sessionID || !output || !Array.isArray(output.system)) return
      try {
        const answer = await ask({ hook_event_name: "session.context", sessionID: rootOf(input.sessionID), cwd })
        if (typeof answer.context === "string") output.system.push(answer.context)
      } catch {
        // the mandate is advice; the first tool call is refused with the reason if orchestrator is unreachable
      }
    },
    "tool.execute.before": async (input, output) => {
      const answer = await ask(base("tool.execute.before", input, output.args))
      if (answer.args && typeof answer.args === "object") Object.assign(output.args, answer.args)
    },
    "tool.execute.after": async (input, output) => {
      const metadata = (output && output.metadata) || {}
      const result = { title: output && output.title }
      for (const key of RESULT_KEYS) {
        if (key in metadata) result[key] = metadata[key]
        else if (output && key in output) result[key] = output[key]
      }
      const answer = await ask({ ...base("tool.execute.after", input, input.args), result })
      if (typeof answer.warning === "string" && output && typeof output.output === "string") {
        output.output += `\n\n${answer.warning}`
      }
    },
  }
}
