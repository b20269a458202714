// The version of rq every process reports (RQ_VERSION to scripts, `version` on the mgr socket, the dashboard).
export const RQ_VERSION = '3.0.0';
