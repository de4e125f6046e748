//go:build cgo

package linux

// Linux errno values (the same on x86-64 and AArch64).
const (
	ePERM        = 1
	eNOENT       = 2
	eSRCH        = 3
	eINTR        = 4
	eIO          = 5
	eNXIO        = 6
	eE2BIG       = 7
	eNOEXEC      = 8
	eBADF        = 9
	eCHILD       = 10
	eBUSY        = 16
	eAGAIN       = 11
	eNOMEM       = 12
	eACCES       = 13
	eFAULT       = 14
	eEXIST       = 17
	eXDEV        = 18
	eNODEV       = 19
	eNOTDIR      = 20
	eISDIR       = 21
	eINVAL       = 22
	eMFILE       = 24
	eNOTTY       = 25
	eFBIG        = 27
	eNOSPC       = 28
	ePIPE        = 32
	eSPIPE       = 29
	eROFS        = 30
	eRANGE       = 34
	eNAMETOOLONG = 36
	eNOSYS       = 38
	eNOTEMPTY    = 39
	eNODATA      = 61
	eOVERFLOW    = 75
	eOPNOTSUPP   = 95
	eTIMEDOUT    = 110

	// The kernel's internal results of an interrupted system call
	// (include/linux/errno.h), which the return to user mode turns into
	// EINTR or a restart (signals.go); the guest never sees them.
	eRestartSys    = 512
	eRestartNoIntr = 513
	eRestartNoHand = 514
	eRestartBlock  = 516
)
