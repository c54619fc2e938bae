// orchestrator's Cline plugin, written by `orch install cline` (orch:managed). Commit it: it names no path of this
// machine. Cline loads every .cline/plugins/*.js of the project (in a plugin subprocess); this one sends each tool
// call to orchestrator before it runs (beforeTool) and after (afterTool). When orchestrator refuses a call, cannot be
// reached, or does not answer in time, the call is SKIPPED with the reason (the model reads it, the run goes on):
// fail closed, never "allow" on its own. It never throws: a throw in a Cline hook fails the whole run.
//
// One round trip per hook: the workspace daemon's socket (.orchestration/run/orch.sock, about a millisecond); when no
// daemon answers, the committed launcher .orchestration/bin/orch-hook, which finds this machine's interpreter,
// evaluates the call and starts a daemon for the next one (docs/adapters.md, "Cline"). Cline 3.0.65 abandons a plugin
// hook after 3 s and then fails the run, so orchestrator's answer is awaited 2.5 s at most.
import { spawn } from "node:child_process"
import { createConnection } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const AGENT = "cline"
// <root>/.cline/plugins/orchestrator.js -> <root>
const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))))
const SOCKET = join(ROOT, ".orchestration", "run", "orch.sock")
const LAUNCHER = join(ROOT, ".orchestration", "bin", "orch-hook")
const CONNECT_MS = 500
// under Cline's own 3 s plugin-hook deadline (not configurable in 3.0.65), with room for its IPC
const DEADLINE_MS = Math.min(2500, Number(process.env.ORCH_CLINE_DEADLINE_MS) || 2500)

let session = null // the Cline session (setup), shared by the subagents of spawn_agent
let cwd = process.cwd()

const failed = (why) => `orchestrator: ${why}; this call was not run (fail closed)`

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
function askDaemon(raw, deadline) {
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
    let timer = setTimeout(() => finish(null), Math.min(CONNECT_MS, deadline - Date.now()))
    sock.on("connect", () => {
      clearTimeout(timer)
      timer = setTimeout(() => finish({ late: true }), Math.max(0, deadline - Date.now()))
      sock.end(request(raw))
    })
    sock.on("data", (chunk) => chunks.push(chunk))
    sock.on("end", () => finish(decode(Buffer.concat(chunks)) || { broken: true }))
    sock.on("error", () => finish(null))
  })
}

// the committed launcher, the event on stdin: it evaluates the call (and starts a daemon for the next ones)
function askLauncher(raw, deadline) {
  return new Promise((resolve) => {
    const out = []
    const err = []
    let child
    try {
      child = spawn(LAUNCHER, [AGENT], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] })
    } catch (exc) {
      resolve({ error: `cannot run the hook launcher .orchestration/bin/orch-hook (${exc && exc.message})` })
      return
    }
    let late = false
    const timer = setTimeout(() => {
      late = true
      child.kill("SIGKILL")
    }, Math.max(0, deadline - Date.now()))
    child.on("error", (exc) => {
      clearTimeout(timer)
      resolve({ error: `the hook launcher .orchestration/bin/orch-hook is missing or not executable (${exc.code || exc.message}); ` +
        "restore it (git checkout .orchestration/bin/orch-hook, or orch install cline) and run orch doctor" })
    })
    child.stdout.on("data", (chunk) => out.push(chunk))
    child.stderr.on("data", (chunk) => err.push(chunk))
    child.stdin.on("error", () => {})
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      if (late) resolve({ late: true })
      else resolve({ code: signal ? -1 : code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString(), signal })
    })
    child.stdin.end(raw)
  })
}

// orchestrator's answer: { value } (an object), or { refused } (the reason the call must not run). Never throws.
async function ask(event) {
  try {
    const raw = JSON.stringify(event)
    const deadline = Date.now() + DEADLINE_MS
    const answer = (await askDaemon(raw, deadline)) || (await askLauncher(raw, deadline))
    if (answer.late) {
      return { refused: failed(`orchestrator did not answer within ${DEADLINE_MS / 1000} s (Cline gives a plugin 3 s); ` +
        "if a person is deciding it in `orch tui`, retry once decided, else retry once") }
    }
    if (answer.broken) return { refused: failed("the orchestrator daemon sent an unreadable answer") }
    if (answer.error) return { refused: failed(answer.error) }
    if (answer.code === 2) return { refused: (answer.err || answer.out).trim() || failed("call blocked") }
    if (answer.code !== 0) {
      const why = answer.signal ? `was killed (${answer.signal})` : `failed (exit ${answer.code})`
      return { refused: failed(`the hook launcher ${why}: ${(answer.err || answer.out).trim().slice(-600)}`) }
    }
    let parsed
    try {
      parsed = JSON.parse(answer.out || "{}")
    } catch {
      parsed = null
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return { refused: failed(`unreadable answer ${JSON.stringify(answer.out.slice(0, 200))}`) }
    }
    return { value: parsed }
  } catch (exc) {
    return { refused: failed(`the plugin failed (${exc && exc.message})`) }
  }
}

// the event orchestrator reads for a beforeTool/afterTool context (see orchestrator/adapters/cline.py)
function toolEvent(name, ctx) {
  const call = (ctx && ctx.toolCall) || {}
  const snapshot = (ctx && ctx.snapshot) || {}
  const source = (call.metadata && call.metadata.toolSource) || {}
  const event = { hook_event_name: name, tool: call.toolName || (ctx && ctx.tool && ctx.tool.name),
    toolCallId: call.toolCallId, input: ctx && ctx.input, sessionID: session, agentId: snapshot.agentId, cwd }
  if (snapshot.parentAgentId) event.parentAgentId = snapshot.parentAgentId
  if (typeof source.modelId === "string") event.model = source.modelId
  return event
}

// what orchestrator reads of a result: whether it ran and succeeded, never the tool's text
function resultOf(result) {
  const output = result && result.output
  const ok = (entry) => ({ success: entry && typeof entry.success === "boolean" ? entry.success : undefined })
  return { isError: Boolean(result && result.isError), output: Array.isArray(output) ? output.map(ok) : ok(output) }
}

export default {
  name: "orchestrator",
  manifest: { capabilities: ["hooks"] },
  setup(_api, ctx) {
    const id = ctx && ctx.session && ctx.session.sessionId
    if (typeof id === "string" && id) session = id
    const rootPath = ctx && ctx.workspaceInfo && ctx.workspaceInfo.rootPath
    if (typeof rootPath === "string" && rootPath) cwd = rootPath
  },
  hooks: {
    async beforeRun() {
      const answer = await ask({ hook_event_name: "session.context", sessionID: session, cwd })
      // the mandate is advice: the first tool call is refused with the reason if orchestrator is unreachable
      return answer.value && typeof answer.value.context === "string" ? { appendContext: answer.value.context } : undefined
    },
    async beforeTool(ctx) {
      const answer = await ask(toolEvent("beforeTool", ctx))
      if (answer.refused) return { skip: true, reason: answer.refused }
      const value = answer.value
      if (typeof value.skip === "string") return { skip: true, reason: value.skip }
      const input = value.input && typeof value.input === "object" ? value.input : undefined
      if (typeof value.ask === "string") {
        // a person decides (a TTY session asks even under --auto-approve; a headless one refuses)
        return { policy: { autoApprove: false }, appendContext: value.ask, ...(input ? { input } : {}) }
      }
      return input ? { input } : undefined
    },
    async afterTool(ctx) {
      const answer = await ask({ ...toolEvent("afterTool", ctx), result: resultOf(ctx && ctx.result) })
      if (answer.refused) return { appendContext: `orchestrator could not record this call: ${answer.refused}` }
      return typeof answer.value.appendContext === "string" && answer.value.appendContext
        ? { appendContext: answer.value.appendContext } : undefined
    },
  },
}
