package plugin

import "syscall"

// dieWithParent has the kernel kill the plugin if reel dies without
// stopping it (SIGKILL, a crash), so that no plugin outlives its host.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
