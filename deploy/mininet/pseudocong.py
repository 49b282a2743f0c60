"""Mininet custom module: pseudocong's OpenFlow 1.0 switch and controller.

    mn --custom deploy/mininet/pseudocong.py \\
       --switch pseudocong,profile=pica8-p3297 --controller pseudocong \\
       --topo linear,3 --test pingall

PseudocongSwitch runs `pseudocong switch` with one AF_PACKET port per
Mininet veth (softswitch/afport), numbered as Mininet numbers them, with
Mininet's dpid. PseudocongController runs `pseudocong controller`. The
binary is $PSEUDOCONG_BIN, else `pseudocong` on PATH.

Run it inside a network namespace of its own and read docs/mininet.md
first: `mn -c` (and mn itself after an error) kills processes and deletes
files machine-wide.
"""

# mn --custom exec()s this file and copies every top-level name into its
# own globals: keep imports to the modules and names mn already has, and
# give our own names prefixes that cannot shadow one of mn's.
import os
import shlex
import shutil
import time

from mininet.log import debug, error, info, warn
from mininet.node import Controller, Node, Switch


# How long start() waits for the controller to report its listening
# address. Generous because a loaded 2-core machine can take seconds to
# start a Go binary; an early death of the process ends the wait at once.
READY_TIMEOUT = 30.0

# How long stop() gives a process to exit on SIGTERM before SIGKILL.
STOP_GRACE = 5.0


def pseudocongBin():
    """Path of the pseudocong binary: $PSEUDOCONG_BIN, else PATH."""
    path = os.environ.get('PSEUDOCONG_BIN')
    if path:
        if not ( os.path.isfile( path ) and os.access( path, os.X_OK ) ):
            raise Exception( 'PSEUDOCONG_BIN=%s is not an executable file'
                             % path )
        return path
    path = shutil.which( 'pseudocong' )
    if not path:
        raise Exception( 'pseudocong binary not found: set PSEUDOCONG_BIN '
                         'or put it on PATH (go build -o bin/pseudocong '
                         './cmd/pseudocong)' )
    return path


def _startBackground( node, argv, logPath, extra='' ):
    """Start argv in node's shell in the background, output to logPath;
       return its pid. extra is appended raw (redirections)."""
    cmdline = ' '.join( shlex.quote( a ) for a in argv )
    node.cmd( '%s >%s 2>&1 %s &' % ( cmdline, shlex.quote( logPath ), extra ) )
    out = node.cmd( 'echo $!' ).strip()
    try:
        return int( out.split()[ -1 ] )
    except ( ValueError, IndexError ):
        raise Exception( '%s: cannot read the pid of %s (got %r)'
                         % ( node.name, argv[ 0 ], out ) )


def _alive( pid ):
    """Is pid a running process (not a zombie)?"""
    try:
        with open( '/proc/%d/stat' % pid ) as f:
            stat = f.read()
    except OSError:
        return False
    # pid (comm) state ...: comm may hold spaces and parentheses.
    state = stat[ stat.rfind( ')' ) + 2: ][ :1 ]
    return state not in ( 'Z', 'X', '' )


def _stopBackground( node, pid ):
    """SIGTERM pid, SIGKILL it after STOP_GRACE, and reap it in node's
       shell. Bounded: never waits on a process that ignores SIGTERM."""
    if not pid:
        return
    node.cmd( 'kill %d 2>/dev/null' % pid )
    deadline = time.time() + STOP_GRACE
    while _alive( pid ) and time.time() < deadline:
        time.sleep( 0.05 )
    if _alive( pid ):
        warn( '*** %s: pid %d ignored SIGTERM; killing it\n'
              % ( node.name, pid ) )
        node.cmd( 'kill -9 %d 2>/dev/null' % pid )
    # The shell keeps the status of its reaped background jobs. Ours exit
    # 0 on SIGTERM; anything else (a crash, SIGKILL) is worth a warning.
    status = node.cmd( 'wait %d 2>/dev/null; echo $?' % pid ).strip()
    status = status.split()[ -1 ] if status else '?'
    if status != '0':
        warn( '*** %s: pid %d exited with status %s\n'
              % ( node.name, pid, status ) )


def _tail( path, n=20 ):
    try:
        with open( path ) as f:
            return ''.join( f.readlines()[ -n: ] )
    except OSError as e:
        return '(cannot read %s: %s)' % ( path, e )


def _peerIntf( intf ):
    """The other end of intf's link, or None."""
    link = getattr( intf, 'link', None )
    if not link:
        return None
    return link.intf2 if link.intf1 is intf else link.intf1


class PseudocongSwitch( Switch ):
    """pseudocong's software switch on Mininet's veths (AF_PACKET ports).

       Parameters (mn --switch pseudocong,NAME=VALUE,...):
       profile: ideal (default), pica8-p3297 or a profile YAML path
       failMode: secure (default) or standalone
       logLevel: debug, info (default), warn, error
       metricsAddr: HOST:PORT for Prometheus metrics (default: off)
       args: extra command-line flags, split as by a shell"""

    def __init__( self, name, profile='ideal', failMode='secure',
                  logLevel='info', metricsAddr='', args='', **params ):
        Switch.__init__( self, name, **params )
        self.profile = str( profile )
        self.failMode = failMode
        self.logLevel = logLevel
        self.metricsAddr = metricsAddr
        self.extraArgs = shlex.split( args ) if args else []
        self.bin = pseudocongBin()
        self.logPath = '/tmp/%s-pseudocong.log' % self.name
        # Not self.pid: Node.pid is the node's shell.
        self.swPid = None

    @classmethod
    def setup( cls ):
        "Nothing to load: no kernel module, no daemon."
        pseudocongBin()

    def dataPorts( self ):
        """(OpenFlow port number, intf) for every data interface, in port
           order; the control interface (lo, port 0) is not one."""
        ports = sorted( ( self.ports[ i ], i ) for i in self.intfList()
                        if i.name != 'lo' and i in self.ports and
                        self.ports[ i ] >= self.portBase )
        return ports

    def disablePeerTxOffload( self, intf ):
        """Our switch copies frames byte for byte and never fills in a
           checksum, so a peer with TX checksum offload sends TCP with a
           partial checksum that the far host drops (ping works, TCP does
           not; softswitch/afport). Turn it off on the far end."""
        peer = _peerIntf( intf )
        if peer is None:
            return
        out = peer.node.cmd( 'ethtool -K %s tx off >/dev/null 2>&1; echo $?'
                             % shlex.quote( peer.name ) ).strip()
        if not out.endswith( '0' ):
            warn( '*** %s: "ethtool -K %s tx off" failed (is ethtool '
                  'installed?): TCP through this port may fail\n'
                  % ( self.name, peer.name ) )

    def start( self, controllers ):
        "Start `pseudocong switch` with every data interface as a port."
        ports = self.dataPorts()
        numbers = [ n for n, _ in ports ]
        if numbers != list( range( 1, len( ports ) + 1 ) ):
            # Our switch numbers --port flags 1, 2, ... in order.
            warn( '*** %s: Mininet port numbers %s are not 1..%d; the '
                  'switch numbers them 1..%d in this order\n'
                  % ( self.name, numbers, len( ports ), len( ports ) ) )
        argv = [ self.bin, 'switch',
                 '--dpid', str( int( self.dpid, 16 ) ),
                 '--profile', self.profile,
                 '--fail-mode', self.failMode,
                 '--log-level', self.logLevel ]
        for _, intf in ports:
            self.disablePeerTxOffload( intf )
            argv += [ '--port', intf.name ]
        if controllers:
            if len( controllers ) > 1:
                warn( '*** %s: pseudocong switch takes one controller; '
                      'using %s\n' % ( self.name, controllers[ 0 ].name ) )
            c = controllers[ 0 ]
            argv += [ '--controller', '%s:%s:%d' % (
                getattr( c, 'protocol', 'tcp' ), c.IP(), c.port ) ]
        if self.listenPort:
            # For dpctl / ovs-ofctl from the Mininet CLI.
            argv += [ '--listen', 'ptcp:%d:127.0.0.1' % self.listenPort ]
        if self.metricsAddr:
            argv += [ '--metrics-addr', self.metricsAddr ]
        argv += self.extraArgs
        debug( '*** %s: %s\n' % ( self.name, ' '.join( argv ) ) )
        self.swPid = _startBackground( self, argv, self.logPath )

    def connected( self ):
        """Has the switch completed its handshake with the controller, and
           not lost it since? Read from its log: it logs every handshake
           and every loss of the connection."""
        if not self.swPid or not _alive( self.swPid ):
            return False
        state = False
        try:
            with open( self.logPath ) as f:
                for line in f:
                    if 'msg="controller connected"' in line:
                        state = True
                    elif 'msg="controller connection failed' in line:
                        state = False
        except OSError:
            return False
        return state

    def dpctl( self, *args ):
        "Run ovs-ofctl against the switch's management listener."
        if not self.listenPort:
            return 'dpctl: %s has no listen port (mn --listenport)\n' % self.name
        return self.cmd( 'ovs-ofctl -O OpenFlow10 ' + ' '.join( args ) +
                         ' tcp:127.0.0.1:%d' % self.listenPort )

    def stop( self, deleteIntfs=True ):
        "Stop the switch process (SIGTERM, bounded), then the interfaces."
        if self.swPid and not _alive( self.swPid ):
            error( '*** %s: pseudocong switch had exited; log %s:\n%s'
                   % ( self.name, self.logPath, _tail( self.logPath ) ) )
        _stopBackground( self, self.swPid )
        self.swPid = None
        super( PseudocongSwitch, self ).stop( deleteIntfs )


class PseudocongController( Controller ):
    """pseudocong's controller (`pseudocong controller`).

       Parameters (mn --controller pseudocong,NAME=VALUE,...):
       app: reactive (default) or proactive (then also rules=FILE)
       rules: rule file for app=proactive
       ip, port: where to listen (default 127.0.0.1:6653, as Mininet)
       logLevel: debug, info (default), warn, error
       args: extra command-line flags, split as by a shell"""

    def __init__( self, name, app='reactive', rules='', logLevel='info',
                  args='', **kwargs ):
        self.bin = pseudocongBin()
        self.app = app
        self.rules = rules
        self.logLevel = logLevel
        self.extraArgs = shlex.split( args ) if args else []
        self.ctlPid = None
        Controller.__init__( self, name, command=self.bin, **kwargs )
        self.logPath = '/tmp/%s-pseudocong.log' % self.name
        self.readyPath = '/tmp/%s-pseudocong.ready' % self.name

    def start( self ):
        """Start the controller and wait until it listens, so switches do
           not spend their first redial backoff on a closed port."""
        argv = [ self.bin, 'controller', '--app', self.app,
                 '--listen', 'ptcp:%d:%s' % ( self.port, self.IP() ),
                 '--log-level', self.logLevel, '--ready-fd', '3' ]
        if self.rules:
            argv += [ '--rules', self.rules ]
        argv += self.extraArgs
        if os.path.exists( self.readyPath ):
            os.remove( self.readyPath )
        debug( '*** %s: %s\n' % ( self.name, ' '.join( argv ) ) )
        self.ctlPid = _startBackground(
            self, argv, self.logPath,
            extra='3>%s' % shlex.quote( self.readyPath ) )
        self.execed = False
        deadline = time.time() + READY_TIMEOUT
        while time.time() < deadline:
            try:
                # --ready-fd writes one JSON line with the bound addresses.
                with open( self.readyPath ) as f:
                    if f.read().endswith( '\n' ):
                        return
            except OSError:
                pass
            if not _alive( self.ctlPid ):
                break
            time.sleep( 0.05 )
        raise Exception( '%s: pseudocong controller did not start listening '
                         'within %.0fs; log %s:\n%s'
                         % ( self.name, READY_TIMEOUT, self.logPath,
                             _tail( self.logPath ) ) )

    # pylint: disable=arguments-differ,signature-differs
    def stop( self, *args, **kwargs ):
        "Stop the controller (SIGTERM, bounded)."
        _stopBackground( self, self.ctlPid )
        self.ctlPid = None
        # Skip Controller.stop: it would `kill %command` by job name.
        Node.stop( self, *args, **kwargs )

    @classmethod
    def isAvailable( cls ):
        "Is the binary there?"
        try:
            return pseudocongBin()
        except Exception:  # pylint: disable=broad-except
            return None


switches = { 'pseudocong': PseudocongSwitch }
controllers = { 'pseudocong': PseudocongController }
