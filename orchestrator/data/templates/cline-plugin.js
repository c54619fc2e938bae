// orchestrator's plugin for @ORCH_AGENT@, written by `orch install cline` (orch:managed). Commit it: it names no path of this
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

// @orch-include hook-wire.js

// under Cline's own 3 s plugin-hook deadline (not configurable in 3.0.65), with room for its IPC. ORCH_CLINE_DEADLINE_MS
// changes it (tests; past 3 s Cline itself fails the run instead)
const DEADLINE_MS = Number(process.env.ORCH_CLINE_DEADLINE_MS) || 2500

let session = null // the Cline session (setup), shared by the subagents of spawn_agent
let cwd = process.cwd()

// orchestrator's answer: { value } (an object), or { refused } (why the call must not run). Never throws: the wire
// client's refusals and failures (it throws them, for hosts where a throw blocks) become a refusal, and so does an
// answer later than Cline would wait (the request goes on in the background; its result is dropped)
async function answerOf(event) {
  let timer
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ refused: `orchestrator: orchestrator did not answer within ${DEADLINE_MS / 1000} ` +
      "s (Cline gives a plugin 3 s); if a person is deciding it in `orch tui`, retry once decided, else retry once; " +
      "this call was not run (fail closed)" }), DEADLINE_MS)
  })
  const asked = ask(event).then((value) => ({ value }), (exc) => ({
    refused: String((exc && exc.message) || exc).replace("this call is blocked", "this call was not run") }))
  try {
    return await Promise.race([asked, late])
  } catch (exc) {
    return { refused: `orchestrator: the plugin failed (${exc && exc.message}); this call was not run (fail closed)` }
  } finally {
    clearTimeout(timer)
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
      const answer = await answerOf({ hook_event_name: "session.context", sessionID: session, cwd })
      // the mandate is advice: the first tool call is refused with the reason if orchestrator is unreachable
      return answer.value && typeof answer.value.context === "string" ? { appendContext: answer.value.context } : undefined
    },
    async beforeTool(ctx) {
      const answer = await answerOf(toolEvent("beforeTool", ctx))
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
      const answer = await answerOf({ ...toolEvent("afterTool", ctx), result: resultOf(ctx && ctx.result) })
      if (answer.refused) return { appendContext: `orchestrator could not record this call: ${answer.refused}` }
      return typeof answer.value.appendContext === "string" && answer.value.appendContext
        ? { appendContext: answer.value.appendContext } : undefined
    },
  },
}
