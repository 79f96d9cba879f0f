-- iopred's job_submit plugin for Slurm (JobSubmitPlugins=lua; this file
-- as job_submit.lua beside slurm.conf). A job of an application that
-- `iopred aid gate` lists as I/O-intensive is given a begin time
-- MAX_HOLD seconds away and the comment "iopred-gate": it waits for the
-- gate, which starts it (scontrol update StartTime=now) as soon as the
-- advice says run. If the gate is down or slow, the job starts at its
-- begin time anyway: the wait is bounded. Other jobs are not touched.
-- The plugin reads one small file and asks nobody: slurmctld's locks are
-- never held for a query.
local APPS = "/var/lib/iopred/kb/gate-apps.txt" -- written by iopred aid gate
local MAX_HOLD = 3600                           -- seconds; as the gate's --max-hold

function slurm_job_submit(job_desc, part_list, submit_uid)
	local f = io.open(APPS, "r")
	if f == nil then
		return slurm.SUCCESS
	end
	local nodes = job_desc.min_nodes
	if nodes == nil or nodes == 0 or nodes >= 4294967294 then
		nodes = 1
	end
	local key = tostring(job_desc.user_name) .. "/" .. tostring(job_desc.name) .. "/" .. tostring(nodes)
	for line in f:lines() do
		if line == key then
			if (job_desc.begin_time == nil or job_desc.begin_time == 0) and (job_desc.comment == nil or job_desc.comment == "") then
				job_desc.begin_time = os.time() + MAX_HOLD
				job_desc.comment = "iopred-gate"
				slurm.log_info("iopred gate: a job of %s waits for the gate", key)
			end
			break
		end
	end
	f:close()
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end
