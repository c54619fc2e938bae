import { appendFileSync } from "node:fs"
const LOG = process.env.PROBE_LOG
const log = (obj) => appendFileSync(LOG, JSON.stringify(obj) + "\n")
const clone = (v) => { try { return JSON.parse(JSON.stringify(v)) } catch { return String(v) } }
export default function (pi) {
  log({ hook: "init", url: import.meta.url, fn: typeof __filename === "undefined" ? null : __filename, node: process.version, cwd: process.cwd() })
  pi.on("session_start", async (event, ctx) => {
    log({ hook: "session_start", event: clone(event), ctx: Object.keys(ctx).sort(), cwd: ctx.cwd, session: ctx.sessionManager.getSessionId(), file: ctx.sessionManager.getSessionFile(), trusted: ctx.isProjectTrusted && ctx.isProjectTrusted(), model: ctx.model && { id: ctx.model.id, provider: ctx.model.provider } })
  })
  pi.on("before_agent_start", async (event, ctx) => {
    log({ hook: "before_agent_start", keys: Object.keys(event).sort(), session: ctx.sessionManager.getSessionId() })
    return { systemPrompt: event.systemPrompt + "\n\nPROBE-MANDATE" }
  })
  pi.on("tool_call", async (event, ctx) => {
    log({ hook: "tool_call", event: clone(event), cwd: ctx.cwd, session: ctx.sessionManager.getSessionId(), model: ctx.model && { id: ctx.model.id, provider: ctx.model.provider } })
    const cmd = event.input && event.input.command
    if (cmd === "echo ORIGINAL") event.input.command = "echo REPLACED"
    if (cmd === "echo BLOCKME") return { block: true, reason: "probe blocked this call" }
    if (cmd === "echo THROWME") throw new Error("probe threw")
  })
  pi.on("tool_result", async (event, ctx) => {
    log({ hook: "tool_result", event: clone(event) })
  })
  pi.on("tool_execution_end", async (event, ctx) => {
    log({ hook: "tool_execution_end", event: clone(event) })
  })
}
